package mqtt

import "errors"

// ErrDisconnected: the connection to the broker is down; the client
// connects again on its own, and the runner starts the receiver again.
var ErrDisconnected = errors.New("mqtt: disconnected from the broker")
