package testutil

import "time"

// PollEvery is how often WaitFor checks its condition: short enough that a
// test waits little past the moment the condition holds, long enough that
// the poll does not steal the CPU the code under test needs.
const PollEvery = 2 * time.Millisecond
