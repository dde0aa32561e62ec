package a2a

import (
	"encoding/json"
	"net/http"
	"strings"
)

// serveCard serves the agent card of the agent below Prefix at path agent
// ("" for the default agent): Config.Card if set, otherwise a card built
// from the configuration whose endpoint is this handler's URL for that
// agent, as the request reached it.
func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request, agent string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.ctr.Reject(reasonHTTP)
		http.Error(w, "agent cards take GET", http.StatusMethodNotAllowed)
		return
	}
	if agent != "" {
		if _, err := h.agentScope(agent); err != nil {
			h.ctr.Reject(reasonNoAgent)
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
	}
	card := h.cfg.Card
	if card == nil {
		card = h.buildCard(endpoint(r, agent))
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(card)
}

// endpoint returns the URL of the JSON-RPC endpoint of the agent at path
// agent, on the host and scheme r came by.
func endpoint(r *http.Request, agent string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + Prefix + strings.TrimSuffix(agent, "/") + "/"
}

// buildCard returns the card of an agent served at url: the name and
// description of the configuration, streaming supported, text in and
// out, the JSON-RPC binding of A2A 0.3 (url, protocolVersion,
// preferredTransport) and of 1.0 (supportedInterfaces).
func (h *Handler) buildCard(url string) []byte {
	desc := h.cfg.Description
	if desc == "" {
		desc = "Agents on the rsbd bus, reached over A2A JSON-RPC."
	}
	b, _ := json.Marshal(map[string]any{
		"name": h.cfg.Name, "description": desc, "version": "1.0.0",
		"url": url, "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
		"supportedInterfaces": []any{
			map[string]any{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
			map[string]any{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
		},
		"capabilities":       map[string]any{"streaming": true, "pushNotifications": false},
		"defaultInputModes":  []string{"text/plain", "application/json"},
		"defaultOutputModes": []string{"text/plain", "application/json"},
		"skills":             []any{},
	})
	return append(b, '\n')
}
