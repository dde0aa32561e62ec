package client

import (
	"slices"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
)

// detacher gives an event a link keeps copies of the slices that may be
// the publisher's memory (see link.publish). The user infos it copied
// last are shared with the next kept event whose user infos are equal: a
// stream's events mostly carry the same few, and received events are
// read-only (Event), so their sharing spares a copy per event. A detacher
// is safe for concurrent use.
type detacher struct {
	last atomic.Pointer[sharedInfos]
}

// sharedInfos is a copy of some user infos, made in one allocation with
// the value that holds it.
type sharedInfos struct {
	infos []notification.UserInfo // points into room
	room  [sharedInfosMax]notification.UserInfo
}

// detach replaces ev's Data, causes, user times and user infos by copies
// (user infos: shared ones when equal to the last copy).
func (d *detacher) detach(ev *notification.Event) {
	ev.Data = slices.Clone(ev.Data)
	ev.Causes = slices.Clone(ev.Causes)
	ev.MetaData.UserTimes = slices.Clone(ev.MetaData.UserTimes)
	ev.MetaData.UserInfos = d.userInfos(ev.MetaData.UserInfos)
}

// userInfos returns a copy of in: the last one when equal, otherwise a new
// one, remembered when in is short (capacity as length, so that an append
// to it never writes into memory another event shares).
func (d *detacher) userInfos(in []notification.UserInfo) []notification.UserInfo {
	if len(in) == 0 || len(in) > sharedInfosMax {
		return slices.Clone(in)
	}
	if last := d.last.Load(); last != nil && slices.Equal(last.infos, in) {
		return last.infos
	}
	s := new(sharedInfos)
	s.infos = s.room[:copy(s.room[:], in):len(in)]
	d.last.Store(s)
	return s.infos
}
