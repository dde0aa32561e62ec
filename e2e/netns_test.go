package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// netLab is a small network the test builds out of network namespaces: a
// "switch" namespace holding a bridge and one namespace per host, each
// with an interface eth0 on the bridge (veth pairs, MTU 1500, so the
// daemons use LAN-sized datagrams and real multicast routing rather than
// loopback). Everything it creates goes with its namespaces when the test
// ends.
type netLab struct {
	t      *testing.T
	prefix string // unique to the test: rsbdt<rand>
	subnet int    // 10.77.<subnet>.0/24
	hosts  int
}

// newNetLab builds the switch, or skips the test where namespaces cannot
// be made (not root, no iproute2, no permission).
func newNetLab(t *testing.T) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 (ip) is not installed")
	}
	r := rand.IntN(1 << 20)
	l := &netLab{t: t, prefix: fmt.Sprintf("rsbdt%05x", r), subnet: r % 250}
	if out, err := exec.Command("ip", "netns", "add", l.ns("sw")).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace: %v: %s", err, out)
	}
	t.Cleanup(l.teardown)
	// A kernel without bridges or veth pairs cannot host the lab: skip.
	for _, args := range [][]string{
		{"ip", "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"},
		{"ip", "link", "add", "probe0", "type", "veth", "peer", "name", "probe1"},
		{"ip", "link", "del", "probe0"},
	} {
		cmd := exec.Command("ip", append([]string{"netns", "exec", l.ns("sw")}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	l.run("sw", "ip", "link", "set", "br0", "up")
	return l
}

// ns names a namespace of the lab.
func (l *netLab) ns(name string) string { return l.prefix + "-" + name }

// run runs a command in namespace name (or the test's with "") and fails
// the test when it fails.
func (l *netLab) run(name string, args ...string) {
	l.t.Helper()
	if name != "" {
		args = append([]string{"ip", "netns", "exec", l.ns(name)}, args...)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// host adds a namespace with eth0 on the bridge and returns its address.
func (l *netLab) host(name string) string {
	l.t.Helper()
	l.hosts++
	ip := fmt.Sprintf("10.77.%d.%d", l.subnet, l.hosts)
	ns, peer := l.ns(name), fmt.Sprintf("%s-p%d", l.prefix, l.hosts)
	l.run("", "ip", "netns", "add", ns)
	// Made in the switch namespace, then one end moved to the host's.
	l.run("sw", "ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", peer)
	l.run("sw", "ip", "link", "set", peer, "master", "br0", "up")
	l.run(name, "ip", "addr", "add", ip+"/24", "dev", "eth0")
	l.run(name, "ip", "link", "set", "eth0", "up")
	l.run(name, "ip", "link", "set", "lo", "up")
	return ip
}

// teardown deletes the lab's namespaces, whatever of them exists.
func (l *netLab) teardown() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], l.prefix+"-") {
			_ = exec.Command("ip", "netns", "del", f[0]).Run()
		}
	}
}

// TestThreeHostsOverVeth runs the three-daemon scenario (routing, a 5 MiB
// event, every QoS class) on three hosts joined by a bridge, by multicast
// and by unicast: datagrams leave and enter through a real interface with
// a 1500-byte MTU, so events travel in LAN-sized datagrams (1400 bytes),
// and the clients reach their daemons through the Unix socket across the
// namespace boundary.
func TestThreeHostsOverVeth(t *testing.T) {
	t.Parallel()
	for _, multicast := range []bool{true, false} {
		t.Run(map[bool]string{true: "multicast", false: "unicast"}[multicast], func(t *testing.T) {
			t.Parallel()
			testThreeHosts(t, multicast)
		})
	}
}

func testThreeHosts(t *testing.T, multicast bool) {
	lab := newNetLab(t)
	ipA, ipB, ipC := lab.host("a"), lab.host("b"), lab.host("c")
	c := newCluster(t)
	mode := []string{"--multicast=" + fmt.Sprint(multicast)}
	a := c.start("A", opts{netns: lab.ns("a"), ip: ipA, args: mode, env: []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}, conf: qosConf})
	b := c.start("B", opts{netns: lab.ns("b"), ip: ipB, args: mode})
	cc := c.start("C", opts{netns: lab.ns("c"), ip: ipC, args: mode})
	start := time.Now()
	td := threeDaemonClients(t, a, b, cc)
	t.Logf("first event delivered %v after the daemons started", time.Since(start).Round(time.Millisecond))
	for _, d := range []*daemon{a, b, cc} {
		if !d.Logged(`"msg":"rsbd transport open"`, `"interface":"eth0"`, `"max_datagram":1400`) {
			t.Errorf("%s does not use LAN-sized datagrams on eth0:\n%s", d.Name(), d.Tail(10))
		}
	}
	checkRouting(t, td)
	checkBigEvent(t, td)
	checkQoS(t, td)
}
