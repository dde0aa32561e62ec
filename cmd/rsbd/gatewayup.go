package main

import "github.com/prometheus/client_golang/prometheus"

// gatewayUp exports rsbd_gateway_up: 1 while the gateway's HTTP listener
// serves, 0 once it stopped with an error (as /readyz reports), so that an
// alert can page on a gateway that is down while the daemon runs.
func gatewayUp(g *gateway) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rsbd_gateway_up",
		Help: "Whether the CloudEvents gateway's HTTP listener serves (1) or stopped with an error (0).",
	}, func() float64 {
		if g.ready() != nil {
			return 0
		}
		return 1
	})
}
