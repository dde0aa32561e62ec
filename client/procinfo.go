package client

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
)

// loadTime approximates the process start when /proc cannot tell it.
var loadTime = time.Now()

// processInfo describes this process for introspection Hellos.
func processInfo(displayName string) *operatingsystem.Process {
	p := proto.CloneOf(baseProcess())
	if displayName != "" {
		p.DisplayName = proto.String(displayName)
	}
	return p
}

var baseProcess = sync.OnceValue(func() *operatingsystem.Process {
	p := &operatingsystem.Process{
		Id:          proto.String(strconv.Itoa(os.Getpid())),
		ProgramName: proto.String(programName()),
		StartTime:   proto.Uint64(uint64(processStart().UnixMicro())),
		RsbVersion:  proto.String(rsbVersion),
	}
	if len(os.Args) > 1 {
		p.CommandlineArguments = append([]string(nil), os.Args[1:]...)
	}
	if u := currentUser(); u != "" {
		p.ExecutingUser = proto.String(u)
	}
	return p
})

func programName() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return filepath.Base(os.Args[0])
	}
	if exe, err := os.Executable(); err == nil {
		return filepath.Base(exe)
	}
	return "unknown"
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// processStart reads the start time of this process from /proc (ticks since
// boot plus the boot time; Linux reports ticks at USER_HZ, 100 per second),
// falling back to the time this package was loaded.
func processStart() time.Time {
	stat, err1 := readSmall("/proc/self/stat")
	sys, err2 := readSmall("/proc/stat")
	if err1 != nil || err2 != nil {
		return loadTime
	}
	// The command name (field 2) may contain spaces; fields after ')' are fixed.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return loadTime
	}
	fields := strings.Fields(string(stat[i+1:]))
	const startField = 22 - 3 // field 22, counted after pid and comm
	if len(fields) <= startField {
		return loadTime
	}
	ticks, err := strconv.ParseUint(fields[startField], 10, 64)
	if err != nil {
		return loadTime
	}
	boot, ok := bootTime(sys)
	if !ok {
		return loadTime
	}
	const userHZ = 100
	t := time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / userHZ)
	if t.After(loadTime) || loadTime.Sub(t) > 365*24*time.Hour {
		return loadTime
	}
	return t
}

// bootTime finds "btime" in /proc/stat.
func bootTime(stat []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(stat))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// hostInfo describes this host for introspection Hellos.
var hostInfo = sync.OnceValue(func() *operatingsystem.Host {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "localhost"
	}
	h := &operatingsystem.Host{
		Id:           proto.String(hostID(name)),
		Hostname:     proto.String(name),
		MachineType:  proto.String(machineType()),
		SoftwareType: proto.String(softwareType()),
	}
	if v := cpuModel(); v != "" {
		h.MachineVersion = proto.String(v)
	}
	if b, err := readSmall("/proc/sys/kernel/osrelease"); err == nil {
		h.SoftwareVersion = proto.String(strings.TrimSpace(string(b)))
	}
	return h
})

// hostID is the machine id (as RSB reads it on Linux), else the hostname.
func hostID(hostname string) string {
	for _, f := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := readSmall(f); err == nil {
			if id := strings.TrimSpace(string(b)); id != "" {
				return id
			}
		}
	}
	return hostname
}

// machineType names the CPU architecture the way RSB does.
func machineType() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "386":
		return "x86"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// softwareType names the operating system the way RSB does.
func softwareType() string {
	if runtime.GOOS == "windows" {
		return "win32"
	}
	return runtime.GOOS
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := readSmall("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// readSmall reads at most maxProcRead bytes of a file.
func readSmall(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxProcRead))
}
