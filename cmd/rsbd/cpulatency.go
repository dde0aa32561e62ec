package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// holdCPULatency asks the kernel that no CPU take longer than us
// microseconds to wake up, and keeps asking until the returned Closer is
// closed: the PM QoS request lasts while the device file stays open. With 0
// an idle CPU polls instead of halting, which saves every hop of a round
// trip the wake-up of a sleeping CPU (tens of microseconds on a virtual
// machine) at the cost of power.
func holdCPULatency(us int) (io.Closer, error) {
	f, err := os.OpenFile(cpuLatencyDevice, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(int32(us)))
	if _, err := f.Write(b[:]); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", cpuLatencyDevice, err)
	}
	return f, nil
}
