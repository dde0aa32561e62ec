package agent

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// Process is an agent running as a child process.
type Process struct {
	*Client
	cmd   *exec.Cmd
	stdin io.WriteCloser
	exit  chan error
}

// Spawn starts argv as an agent process. A non-empty cpus pins the process
// (all its threads) with taskset -c cpus. The agent's standard error goes to
// stderr.
func Spawn(name string, argv []string, cpus string, stderr io.Writer) (*Process, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("agent %s: empty command", name)
	}
	if cpus != "" {
		argv = append([]string{"taskset", "-c", cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	cmd.Env = os.Environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("agent %s: %w", name, err)
	}
	p := &Process{Client: NewClient(name, stdin, stdout), cmd: cmd, stdin: stdin, exit: make(chan error, 1)}
	go func() { p.exit <- cmd.Wait() }()
	return p, nil
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Close asks the agent to quit and waits up to timeout for it to exit; past
// that the process is killed.
func (p *Process) Close(timeout time.Duration) error {
	_ = p.Do(OpQuit, nil, timeout, nil)
	_ = p.stdin.Close()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-p.exit:
		return err
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.exit
		return fmt.Errorf("agent %s: killed after %v", p.name, timeout)
	}
}
