package testutil

import "strings"

// BrowserReport is what WebSocketPage's script reports: the first
// CloudEvent it received (its JSON, id, subject and data, and the text
// the page then shows), or why the socket failed.
type BrowserReport struct {
	Error    string `json:"error"`
	Protocol string `json:"protocol"`
	Message  string `json:"message"`
	ID       string `json:"id"`
	Subject  string `json:"subject"`
	Data     string `json:"data"`
	Text     string `json:"text"`
}

// WebSocketPage returns a page whose script subscribes to wsURL over a
// WebSocket with subprotocol protocol, as a web client of the CloudEvents
// gateway does. On the first message it writes the CloudEvent's id and
// data into the document and POSTs a BrowserReport as JSON to reportPath
// (on the page's own origin); a socket that fails or closes first is
// reported too, so that a test fails fast with the reason.
func WebSocketPage(wsURL, protocol, reportPath string) string {
	return strings.NewReplacer("{{ws}}", wsURL, "{{protocol}}", protocol, "{{report}}", reportPath).Replace(wsPage)
}

// wsPage is WebSocketPage's template; wsURL is a JavaScript expression.
const wsPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>rsbd WebSocket</title></head>
<body><p id="out">waiting</p>
<script>
const out = document.getElementById("out");
let done = false;
function report(r) {
  if (done) return;
  done = true;
  fetch("{{report}}", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(r)});
}
const ws = new WebSocket({{ws}}, "{{protocol}}");
ws.onmessage = (m) => {
  let ce;
  try { ce = JSON.parse(m.data); } catch (e) { report({error: "not JSON: " + e, message: m.data}); return; }
  out.textContent = ce.id + " " + ce.data;
  report({protocol: ws.protocol, message: m.data, id: ce.id, subject: ce.subject, data: ce.data, text: out.textContent});
  ws.close();
};
ws.onerror = () => report({error: "websocket error"});
ws.onclose = (c) => report({error: "websocket closed: " + c.code + " " + c.reason});
</script></body></html>
`
