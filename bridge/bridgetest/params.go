package bridgetest

import "time"

// Timeout bounds every wait of the bridge tests: generous, the machines
// are shared.
const Timeout = 30 * time.Second

// retryBackoff is how long Inbound and SendAll wait before they call a
// receiver or sender again, as the bridge runner backs off after a
// failure; short, so that a test recovers quickly from a broker restart.
const retryBackoff = 50 * time.Millisecond
