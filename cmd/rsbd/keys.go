package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/transport/datagram"
)

// Keys of the data plane's security settings (config.FlagKey of their
// flags).
const (
	keyKeyFile      = "rsbd.key.file"
	keyClusterLabel = "rsbd.cluster.label"
)

// errKeyFileMode means the key file is readable or writable by others than
// its owner.
var errKeyFileMode = errors.New("key file accessible by group or others (chmod 600 it)")

// readKeyFile reads the keyring of the data plane and the gossip from path
// (datagram.ParseKeys: "ID KEY" a line, the first the primary), refusing
// a file that others than its owner may access.
func readKeyFile(path string) ([]datagram.Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&keyFileForbiddenMode != 0 {
		return nil, fmt.Errorf("%w: mode %v", errKeyFileMode, fi.Mode().Perm())
	}
	if fi.Size() > datagram.MaxKeyFileSize {
		return nil, fmt.Errorf("%w: %d bytes", datagram.ErrKeyFile, fi.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, datagram.MaxKeyFileSize+1))
	if err != nil {
		return nil, err
	}
	return datagram.ParseKeys(b)
}

// keys reads the key file and the cluster label into nc.
func (r *reader) keys(nc *node.Config) {
	nc.ClusterLabel = r.c.String(keyClusterLabel, "")
	if len(nc.ClusterLabel) > datagram.MaxLabelSize {
		r.fail(keyClusterLabel, fmt.Sprintf("at most %d bytes", datagram.MaxLabelSize), nil)
	}
	path := r.c.String(keyKeyFile, "")
	if path == "" {
		return
	}
	keys, err := readKeyFile(path)
	if err != nil {
		r.fail(keyKeyFile, "a key file of mode 600 or stricter: one \"ID KEY\" a line (id 1..255, 32 bytes in hex or base64)", err)
		return
	}
	nc.Keys = keys
}

// watchKeys warns that the data plane is open when there is no key file,
// and otherwise reloads the key file into nd on every SIGHUP until the
// returned function is called. A reload that fails keeps the keys in
// force.
func watchKeys(nd *node.Node, path string, log *slog.Logger) (stop func()) {
	if path == "" {
		log.Warn("the data plane is open: without --key-file anyone who reaches the gossip and data ports can join the cluster, publish events and read them")
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-hup:
				reloadKeys(nd, path, log)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-exited
	}
}

// reloadKeys puts the key file's keys in force.
func reloadKeys(nd *node.Node, path string, log *slog.Logger) {
	keys, err := readKeyFile(path)
	if err == nil {
		err = nd.SetKeys(keys)
	}
	if err != nil {
		log.Error("keys not reloaded, the previous ones stay", "file", path, "err", err)
		return
	}
	ids := make([]int, len(keys))
	for i, k := range keys {
		ids[i] = int(k.ID)
	}
	log.Info("keys reloaded", "file", path, "primary", ids[0], "ids", ids)
}
