package a2a

import "strings"

// Version is an A2A protocol version, as the A2A-Version header names it.
type Version int

// The versions served. Values: append only.
const (
	// V03 is A2A 0.3: slash-separated method names (message/send); a
	// request without an A2A-Version header is 0.3.
	V03 Version = iota
	// V10 is A2A 1.0: PascalCase method names (SendMessage).
	V10
)

// String returns the version as the A2A-Version header carries it.
func (v Version) String() string {
	if v == V10 {
		return "1.0"
	}
	return "0.3"
}

// ParseVersion reads an A2A-Version header: empty or 0.3[.x] is V03,
// 1.0[.x] is V10; any other is an *Error with CodeVersionNotSupported.
func ParseVersion(h string) (Version, error) {
	h = strings.TrimSpace(h)
	switch {
	case h == "" || h == "0.3" || strings.HasPrefix(h, "0.3."):
		return V03, nil
	case h == "1.0" || strings.HasPrefix(h, "1.0."):
		return V10, nil
	}
	return 0, errorf(CodeVersionNotSupported, "A2A-Version %q is not supported (0.3 and 1.0 are)", truncate(h, 64))
}

// Method is an A2A operation: its names in both versions and how it is
// answered.
type Method struct {
	// V03 and V10 are the operation's names in A2A 0.3 and 1.0.
	V03, V10 string
	// Streaming operations are answered with Server-Sent Events.
	Streaming bool
}

// methods are the A2A operations. The 1.0 name is the RSB method (a
// scope component) the agent's server offers.
var methods = []Method{
	{"message/send", "SendMessage", false},
	{"message/stream", "SendStreamingMessage", true},
	{"tasks/get", "GetTask", false},
	{"tasks/list", "ListTasks", false},
	{"tasks/cancel", "CancelTask", false},
	{"tasks/resubscribe", "SubscribeToTask", true},
	{"tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig", false},
	{"tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig", false},
	{"tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs", false},
	{"tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig", false},
	{"agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard", false},
}

// Lookup returns the operation a method name names in version v. A name
// of the other version, or an unknown one, is an *Error with
// CodeMethodNotFound saying which.
func Lookup(name string, v Version) (Method, error) {
	for _, m := range methods {
		if v == V03 && m.V03 == name || v == V10 && m.V10 == name {
			return m, nil
		}
		if v == V03 && m.V10 == name || v == V10 && m.V03 == name {
			return Method{}, errorf(CodeMethodNotFound, "method %q is not an A2A %s name (A2A-Version %s names it %q)",
				name, v, v, m.name(v))
		}
	}
	return Method{}, errorf(CodeMethodNotFound, "method %q not found", truncate(name, 128))
}

// name returns the operation's name in version v.
func (m Method) name(v Version) string {
	if v == V10 {
		return m.V10
	}
	return m.V03
}

// truncate cuts s to at most n bytes on a rune boundary, for messages that
// quote input.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}
