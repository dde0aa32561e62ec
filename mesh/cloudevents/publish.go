package cloudevents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/scope"
)

// errFormat: a CloudEvents format other than JSON.
var errFormat = errors.New("cloudevents: unsupported CloudEvents format")

// errSubject: an event's subject outside the request's scope.
var errSubject = errors.New("cloudevents: subject outside the path's scope")

// accepted is one entry of the reply to a publish.
type accepted struct {
	ID    string `json:"id"`
	RSBID string `json:"rsbid,omitempty"`
	// Expired marks an event whose time to live (emttl) had passed: it is
	// accepted but not published.
	Expired bool `json:"expired,omitempty"`
}

// publish serves a POST: decodes the events of the body in the mode its
// Content-Type says, checks them all, publishes them and replies 202 with
// their ids.
func (g *Gateway) publish(w http.ResponseWriter, r *http.Request, sc scope.Scope) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			g.fail(w, http.StatusRequestEntityTooLarge, reasonTooLarge, fmt.Sprintf("body over %d bytes", mbe.Limit))
		} else {
			g.fail(w, http.StatusBadRequest, reasonBody, "reading the body: "+err.Error())
		}
		return
	}
	events, err := decodeRequest(r.Header, body)
	if err != nil {
		g.refuse(w, err)
		return
	}
	ids, err := g.publishEvents(r.Context(), events, sc)
	if err != nil {
		g.refuse(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	b, _ := json.Marshal(struct {
		Accepted []accepted `json:"accepted"`
	}{ids})
	_, _ = w.Write(append(b, '\n'))
}

// refuse replies the status and reason err calls for.
func (g *Gateway) refuse(w http.ResponseWriter, err error) {
	status, why := classify(err)
	g.fail(w, status, why, err.Error())
}

// classify maps an error of decoding or publishing to its HTTP status and
// reason.
func classify(err error) (int, reason) {
	switch {
	case errors.Is(err, errFormat):
		return http.StatusUnsupportedMediaType, reasonFormat
	case errors.Is(err, cloudevent.ErrTooLarge), errors.Is(err, cloudevent.ErrDataTooLarge),
		errors.Is(err, cloudevent.ErrBatchTooLong):
		return http.StatusRequestEntityTooLarge, reasonTooLarge
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden, reasonForbidden
	case errors.Is(err, errSubject):
		return http.StatusBadRequest, reasonSubject
	case errors.Is(err, errTooManySubscribers):
		return http.StatusServiceUnavailable, reasonSubscribers
	case errors.Is(err, client.ErrClosed), errors.Is(err, client.ErrDisconnected):
		return http.StatusServiceUnavailable, reasonBus
	case errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable, reasonBus
	}
	return http.StatusBadRequest, reasonMalformed
}

// decodeRequest returns the events of a POST: structured, batch or binary
// by Content-Type.
func decodeRequest(h http.Header, body []byte) ([]*cloudevent.Event, error) {
	ct := h.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case mt == cloudevent.MediaType:
		e, err := cloudevent.Unmarshal(body)
		if err != nil {
			return nil, err
		}
		return []*cloudevent.Event{e}, nil
	case mt == cloudevent.BatchMediaType:
		return cloudevent.UnmarshalBatch(body)
	case strings.HasPrefix(mt, "application/cloudevents"):
		return nil, fmt.Errorf("%w: %s", errFormat, mt)
	}
	e, err := decodeBinary(h, ct, body)
	if err != nil {
		return nil, err
	}
	return []*cloudevent.Event{e}, nil
}

// decodeBinary returns the event of a binary-mode request: attributes from
// the ce-* headers, datacontenttype from Content-Type, data from the body.
func decodeBinary(h http.Header, ct string, body []byte) (*cloudevent.Event, error) {
	e := &cloudevent.Event{DataContentType: ct}
	if len(body) > 0 {
		e.Data = body
	}
	specVersion := false
	for key, vals := range h {
		name, ok := strings.CutPrefix(strings.ToLower(key), headerPrefix)
		if !ok {
			continue
		}
		if len(vals) != 1 {
			return nil, fmt.Errorf("%w: header %s repeated", cloudevent.ErrBadValue, key)
		}
		if name == cloudevent.AttrDataContentType {
			return nil, fmt.Errorf("%w: ce-datacontenttype must not be sent; Content-Type carries it", cloudevent.ErrBadValue)
		}
		v, err := headerValue(vals[0])
		if err != nil {
			return nil, fmt.Errorf("%w: header %s: %w", cloudevent.ErrBadValue, key, err)
		}
		specVersion = specVersion || name == cloudevent.AttrSpecVersion
		if err := e.SetAttr(name, v); err != nil {
			return nil, err
		}
	}
	if !specVersion {
		return nil, fmt.Errorf("%w: ce-specversion header absent", cloudevent.ErrSpecVersion)
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// headerValue decodes a binary-mode header value as the HTTP binding says:
// a quoted string is unquoted, then percent-encoding is decoded once.
func headerValue(v string) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var b strings.Builder
		for i := 1; i < len(v)-1; i++ {
			if v[i] == '\\' && i+1 < len(v)-1 {
				i++
			}
			b.WriteByte(v[i])
		}
		v = b.String()
	}
	return url.PathUnescape(v)
}

// publishEvents checks every event, then publishes them in order, each on
// its subject (which must lie within sc) or on sc; an event past its time
// to live is not published, and counted.
func (g *Gateway) publishEvents(ctx context.Context, events []*cloudevent.Event, sc scope.Scope) ([]accepted, error) {
	evs := make([]*client.Event, len(events))
	now := time.Now()
	for i, e := range events {
		expired, err := frame.EventExpired(e, now)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		if expired {
			continue
		}
		ev, err := toClientEvent(e, sc)
		if err == nil {
			err = checkPublish(ctx, ev.Scope)
		}
		if err != nil {
			if len(events) > 1 {
				err = fmt.Errorf("event %d: %w", i, err)
			}
			return nil, err
		}
		evs[i] = ev
	}
	ids := make([]accepted, len(evs))
	for i, ev := range evs {
		if ev == nil {
			g.st.m.AddDropped(dropExpired, 1)
			ids[i] = accepted{ID: events[i].ID, Expired: true}
			continue
		}
		if err := g.inf.PublishEvent(ctx, ev); err != nil {
			return nil, fmt.Errorf("publishing event %d: %w", i, err)
		}
		g.st.m.AddPublished(1)
		ids[i] = accepted{ID: events[i].ID, RSBID: ev.ID.String()}
	}
	return ids, nil
}

// toClientEvent maps a CloudEvent to the event the gateway's informer
// publishes.
func toClientEvent(e *cloudevent.Event, sc scope.Scope) (*client.Event, error) {
	if e.Subject == "" {
		e.Subject = sc.String()
	} else if sub, err := scope.Parse(e.Subject); err != nil || !sc.Contains(sub) {
		return nil, fmt.Errorf("%w: subject %s, path %s", errSubject, strconv.Quote(e.Subject), sc)
	}
	ev, err := e.ToRSB()
	if err != nil {
		return nil, err
	}
	switch {
	case len(ev.Data) == 0 && ev.WireSchema == "":
		ev.Data = nil // a void event
	case ev.WireSchema == "":
		ev.WireSchema = "application/json" // CloudEvents data without a content type is JSON
	}
	return &client.Event{Event: *ev}, nil
}
