package cloudevents

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/cloudevent/filter"
)

// format is what a subscriber receives of each event, chosen by the query
// parameter format.
type format int

// The formats.
const (
	// formatCloudEvents delivers structured CloudEvents JSON (the
	// default, format=cloudevents).
	formatCloudEvents format = iota
	// formatRaw delivers the event's payload alone (format=raw).
	formatRaw
)

// sseBase64Event is the SSE event type of a raw payload that is not valid
// UTF-8 and therefore travels base64-encoded (standard alphabet, padded).
const sseBase64Event = "base64"

// parseFormat returns the format the query parameter value v names; ""
// is the default.
func parseFormat(v string) (format, error) {
	switch v {
	case "", "cloudevents":
		return formatCloudEvents, nil
	case "raw":
		return formatRaw, nil
	}
	return 0, fmt.Errorf("format %q: want cloudevents or raw", v)
}

// outgoing returns ce ready for a subscriber in format f.
func (f format) outgoing(ce *cloudevent.Event) (outgoing, error) {
	if f == formatRaw {
		return outgoing{id: ce.ID, json: ce.Data, text: utf8.Valid(ce.Data)}, nil
	}
	b, err := cloudevent.Marshal(ce)
	return outgoing{id: ce.ID, json: b}, err
}

// appendSSE appends o as one SSE event in format f. A raw payload that is
// valid UTF-8 goes on data lines as it is (its line breaks cut it into
// lines, which the client joins with LF); any other payload goes as one
// data line of base64, marked by the event type "base64".
func (f format) appendSSE(b []byte, o outgoing) []byte {
	if f != formatRaw {
		return appendSSE(b, o)
	}
	b = append(b, "id: "...)
	b = append(b, o.id...)
	b = append(b, '\n')
	if o.text {
		return appendSSEData(b, o.json)
	}
	b = append(b, "event: "+sseBase64Event+"\ndata: "...)
	b = base64.StdEncoding.AppendEncode(b, o.json)
	return append(b, '\n', '\n')
}

// subscriptionParams parses the query parameters of an SSE or WebSocket
// subscription (filter, format); on a bad one it replies 400 and returns
// false.
func (g *Gateway) subscriptionParams(w http.ResponseWriter, r *http.Request) (filter.Filter, format, bool) {
	q := r.URL.Query()
	flt, err := filter.Parse([]byte(q.Get("filter")))
	if err != nil {
		g.fail(w, http.StatusBadRequest, reasonFilter, err.Error())
		return flt, 0, false
	}
	f, err := parseFormat(q.Get("format"))
	if err != nil {
		g.fail(w, http.StatusBadRequest, reasonOutFormat, err.Error())
		return flt, 0, false
	}
	return flt, f, true
}
