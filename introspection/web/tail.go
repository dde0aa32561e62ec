package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TailEvent is one event of /api/tail.
type TailEvent struct {
	Time       time.Time `json:"time"`
	Scope      string    `json:"scope"`
	Method     string    `json:"method,omitempty"`
	WireSchema string    `json:"wire-schema"`
	ID         string    `json:"id"`
	Size       int       `json:"size"`
	// Text is the payload (its first maxPreview bytes) when it is UTF-8,
	// else Base64 holds them.
	Text   string `json:"text,omitempty"`
	Base64 string `json:"base64,omitempty"`
}

// tailEventOf describes ev.
func tailEventOf(ev *client.Event) TailEvent {
	te := TailEvent{Time: client.Time(ev.MetaData.CreateTime), Scope: ev.Scope.String(), Method: ev.Method,
		WireSchema: ev.WireSchema, ID: notification.FormatUUID(ev.ID.UUID()), Size: len(ev.Data)}
	data := ev.Data[:min(len(ev.Data), maxPreview)]
	if utf8.Valid(data) {
		te.Text = string(data)
	} else {
		te.Base64 = base64.StdEncoding.EncodeToString(data)
	}
	return te
}

// serveTail streams the events on the scope of the request as SSE.
func (h *Handler) serveTail(w http.ResponseWriter, r *http.Request) {
	sc, err := scope.Parse(r.URL.Query().Get("scope"))
	if err != nil {
		replyError(w, http.StatusBadRequest, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		replyError(w, http.StatusInternalServerError, errNoFlush)
		return
	}
	select {
	case h.tails <- struct{}{}:
		defer func() { <-h.tails }()
	default:
		replyError(w, http.StatusServiceUnavailable, errTooManyTails)
		return
	}
	rd, err := h.bus.NewReader(sc, client.WithQueue(tailQueue, client.DropOldest))
	if err != nil {
		replyError(w, http.StatusInternalServerError, err)
		return
	}
	defer rd.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(": tail " + sc.String() + "\n\n"))
	fl.Flush()
	h.pump(w, fl, r, rd)
}

// pump writes the reader's events until the request or the Handler ends.
func (h *Handler) pump(w http.ResponseWriter, fl http.Flusher, r *http.Request, rd *client.Reader) {
	ctx := r.Context()
	events := make(chan *client.Event)
	go func() {
		defer close(events)
		for {
			ev, err := rd.Read(ctx)
			if err != nil {
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	ka := time.NewTicker(keepAlive)
	defer ka.Stop()
	for {
		var line []byte
		select {
		case <-h.done:
			return
		case <-ka.C:
			line = []byte(": keep-alive\n\n")
		case ev, ok := <-events:
			if !ok {
				return
			}
			b, _ := json.Marshal(tailEventOf(ev))
			line = append(append([]byte("data: "), b...), "\n\n"...)
		}
		if _, err := w.Write(line); err != nil {
			return
		}
		fl.Flush()
	}
}
