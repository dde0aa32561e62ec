// Command rsbd is the rsbd daemon: one per host, it carries RSB events between
// local clients and the other daemons of the cluster.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	fmt.Fprintf(os.Stdout, "rsbd %s\n", version)
}
