package gcfloor

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFiles creates files (path relative to root: content) below root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		self  string
		files map[string]string
		want  uint64
	}{
		{"v2 own limit", "0::/robot/rsbd.service\n",
			map[string]string{"robot/rsbd.service/memory.max": "268435456\n", "robot/memory.max": "max\n"}, 256 << 20},
		{"v2 ancestor lower", "0::/robot/rsbd.service\n",
			map[string]string{"robot/rsbd.service/memory.max": "max\n", "robot/memory.max": "104857600\n"}, 100 << 20},
		{"v2 unlimited", "0::/a\n", map[string]string{"a/memory.max": "max\n", "memory.max": "max\n"}, 0},
		{"v1 own limit", "12:pids:/x\n4:memory:/docker/abc\n0::/\n",
			map[string]string{"memory/docker/abc/memory.limit_in_bytes": "536870912\n"}, 512 << 20},
		{"v1 container view: the root file", "4:memory:/docker/abc\n",
			map[string]string{"memory/memory.limit_in_bytes": "134217728\n"}, 128 << 20},
		{"v1 unlimited", "4:cpu,memory:/a\n",
			map[string]string{"memory/a/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"garbage", "nonsense\n4:memory\n", map[string]string{"memory.max": "12ab\n"}, 0},
		{"nothing readable", "0::/gone\n", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, c.files)
			if got := cgroupMemoryLimit(root, []byte(c.self)); got != c.want {
				t.Fatalf("limit %d, want %d", got, c.want)
			}
		})
	}
}

func TestFloorWithin(t *testing.T) {
	const mib = 1 << 20
	if f, capped := floorWithin(64*mib, 0); f != 64*mib || capped {
		t.Fatalf("no limit: %d %v", f, capped)
	}
	if f, capped := floorWithin(64*mib, 1024*mib); f != 64*mib || capped {
		t.Fatalf("roomy limit: %d %v", f, capped)
	}
	if f, capped := floorWithin(64*mib, 128*mib); f != 32*mib || !capped {
		t.Fatalf("128 MiB container: floor %d MiB %v, want 32 MiB capped", f/mib, capped)
	}
}
