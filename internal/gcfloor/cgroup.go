package gcfloor

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// EffectiveFloor returns the floor Start puts in force for cfg, in bytes:
// cfg's floor, capped at a quarter of the memory limit of the process's
// cgroup when one is set (capped is then true), so that a daemon in a
// small container is not killed for a heap it was told it could keep.
func EffectiveFloor(cfg Config) (floor uint64, capped bool) {
	cfg = cfg.withDefaults()
	self, _ := os.ReadFile("/proc/self/cgroup") // none: no cgroup limit known
	return floorWithin(uint64(cfg.FloorMiB)<<20, cgroupMemoryLimit(cgroupRoot, self))
}

// floorWithin caps floor at cgroupShare of limit (0: no limit).
func floorWithin(floor, limit uint64) (uint64, bool) {
	if limit == 0 || floor <= limit/cgroupShare {
		return floor, false
	}
	return limit / cgroupShare, true
}

// cgroupMemoryLimit returns the least memory limit set on the process's
// cgroup or its ancestors, 0 when none is set or none can be read. self is
// the content of /proc/self/cgroup; root is where the hierarchies are
// mounted. It reads cgroup v2 (memory.max) and v1 (memory.limit_in_bytes).
func cgroupMemoryLimit(root string, self []byte) uint64 {
	var least uint64
	take := func(file string) {
		if v := readLimit(file); v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		dir, file := "", ""
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, file = root, "memory.max"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			dir, file = filepath.Join(root, "memory"), "memory.limit_in_bytes"
		default:
			continue
		}
		// The cgroup and its ancestors; in a container whose namespace
		// shows its own cgroup as the root, the path may not exist below
		// the mount, and the root's file is the container's.
		for p := path.Clean("/" + parts[2]); ; p = path.Dir(p) {
			take(filepath.Join(dir, p, file))
			if p == "/" {
				break
			}
		}
	}
	return least
}

// readLimit reads one limit file: a byte count, or "max" (v2) or a value
// of 2^62 or more (v1's "unlimited") for none. Unreadable files give 0.
func readLimit(file string) uint64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v >= unlimitedCgroup {
		return 0
	}
	return v
}
