package cloudevents

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

// webhookRequest is the JSON body of POST WebhooksPath, and with an id and
// counters an entry of GET WebhooksPath's list.
type webhookRequest struct {
	Scope      string          `json:"scope"`
	URL        string          `json:"url"`
	Filter     json.RawMessage `json:"filter,omitempty"`
	DeadLetter string          `json:"deadLetter,omitempty"`
}

// webhookEntry is one webhook created over HTTP as GET lists it.
type webhookEntry struct {
	ID string `json:"id"`
	webhookRequest
	WebhookStats
}

// hookEntry is a webhook created over HTTP and the request that made it.
type hookEntry struct {
	req webhookRequest
	w   *Webhook
}

// hookRegistry holds the webhooks created over HTTP, at most
// maxHTTPWebhooks.
type hookRegistry struct {
	mu   sync.Mutex
	byID map[string]*hookEntry
}

// serveAdmin serves the gateway's own paths under AdminPrefix, which no
// scope can take: WebhooksPath and WebhooksPath/<id>.
func (g *Gateway) serveAdmin(w http.ResponseWriter, r *http.Request) {
	gr, authorized := g.adminGrant(w, r)
	if !authorized {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, WebhooksPath)
	switch {
	case ok && (rest == "" || rest == "/"):
		switch r.Method {
		case http.MethodPost:
			g.createWebhook(w, r, gr)
		case http.MethodGet:
			g.listWebhooks(w)
		default:
			w.Header().Set("Allow", "GET, POST")
			g.fail(w, http.StatusMethodNotAllowed, reasonMethod, r.Method+" not allowed")
		}
	case ok && strings.HasPrefix(rest, "/") && !strings.Contains(rest[1:], "/"):
		if r.Method != http.MethodDelete {
			w.Header().Set("Allow", "DELETE")
			g.fail(w, http.StatusMethodNotAllowed, reasonMethod, r.Method+" not allowed")
			return
		}
		g.deleteWebhook(w, rest[1:])
	default:
		g.fail(w, http.StatusNotFound, reasonNotFound, r.URL.Path+" not found")
	}
}

// createWebhook starts the webhook the JSON body describes and replies 201
// with its id.
func (g *Gateway) createWebhook(w http.ResponseWriter, r *http.Request, gr *grant) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookRequest))
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		g.fail(w, http.StatusRequestEntityTooLarge, reasonTooLarge, fmt.Sprintf("webhook request over %d bytes", mbe.Limit))
		return
	} else if err != nil {
		g.fail(w, http.StatusBadRequest, reasonBody, "reading the body: "+err.Error())
		return
	}
	var req webhookRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		if err == nil {
			err = errors.New("trailing data")
		}
		g.fail(w, http.StatusBadRequest, reasonWebhook, "webhook request: "+err.Error())
		return
	}
	if req.Scope == "" || req.URL == "" {
		g.fail(w, http.StatusBadRequest, reasonWebhook, "webhook request: scope and url are required")
		return
	}
	if !g.webhookPermitted(w, gr, req) {
		return
	}
	reg := &g.hooks
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if len(reg.byID) >= maxHTTPWebhooks {
		g.fail(w, http.StatusConflict, reasonWebhooks, fmt.Sprintf("at most %d webhooks", maxHTTPWebhooks))
		return
	}
	hook, err := g.AddWebhook(WebhookConfig{Scope: req.Scope, URL: req.URL, Filter: string(req.Filter), DeadLetter: req.DeadLetter})
	if err != nil {
		if errors.Is(err, ErrConfig) {
			g.fail(w, http.StatusBadRequest, reasonWebhook, err.Error())
		} else {
			g.refuse(w, err)
		}
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	if reg.byID == nil {
		reg.byID = make(map[string]*hookEntry)
	}
	reg.byID[id] = &hookEntry{req: req, w: hook}
	go func() { // a webhook that ends (410, gateway closed) leaves the list
		<-hook.done
		reg.mu.Lock()
		if e := reg.byID[id]; e != nil && e.w == hook {
			delete(reg.byID, id)
		}
		reg.mu.Unlock()
	}()
	w.Header().Set("Location", WebhooksPath+"/"+id)
	writeJSON(w, http.StatusCreated, struct {
		ID string `json:"id"`
	}{id})
}

// webhookPermitted refuses, with 400 or 403, a webhook request whose
// scopes do not parse or lie outside what the grant gr allows.
func (g *Gateway) webhookPermitted(w http.ResponseWriter, gr *grant, req webhookRequest) bool {
	if gr == nil {
		return true // AddWebhook checks the scopes
	}
	sc, err := scope.Parse(req.Scope)
	var dl scope.Scope
	if err == nil && req.DeadLetter != "" {
		dl, err = scope.Parse(req.DeadLetter)
	}
	if err != nil {
		g.fail(w, http.StatusBadRequest, reasonWebhook, "webhook request: "+err.Error())
		return false
	}
	if !webhookAllowed(gr, sc, dl, req.DeadLetter != "") {
		g.fail(w, http.StatusForbidden, reasonForbidden, fmt.Sprintf("%v: webhook on %s", ErrForbidden, req.Scope))
		return false
	}
	return true
}

// listWebhooks replies the webhooks created over HTTP, by id.
func (g *Gateway) listWebhooks(w http.ResponseWriter) {
	reg := &g.hooks
	reg.mu.Lock()
	list := make([]webhookEntry, 0, len(reg.byID))
	for id, e := range reg.byID {
		list = append(list, webhookEntry{ID: id, webhookRequest: e.req, WebhookStats: e.w.Stats()})
	}
	reg.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	writeJSON(w, http.StatusOK, list)
}

// deleteWebhook stops the webhook id and replies 204.
func (g *Gateway) deleteWebhook(w http.ResponseWriter, id string) {
	reg := &g.hooks
	reg.mu.Lock()
	e := reg.byID[id]
	delete(reg.byID, id)
	reg.mu.Unlock()
	if e == nil {
		g.fail(w, http.StatusNotFound, reasonNotFound, "no webhook "+id)
		return
	}
	if err := e.w.Close(); err != nil && !errors.Is(err, ErrWebhookGone) && !errors.Is(err, client.ErrClosed) {
		g.log.Debug("cloudevents: webhook close", "id", id, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
}

// writeJSON replies status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
