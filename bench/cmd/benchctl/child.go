package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/bench/internal/ctlbench"
)

// proc is one controller process, measured from outside: /proc/<pid>/stat and status.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan message
	stderr  *tailBuffer
	start   time.Time
	exited  chan struct{} // closed once the process has exited; waitErr is then set
	waitErr error
}

// message is a line of the controller: its word ("ready", "stats", "done", "error") and
// its JSON.
type message struct {
	what string
	body []byte
}

// startProc starts bin with args and KUBECONFIG=kubeconfig.
func startProc(ctx context.Context, bin, kubeconfig string, args ...string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p := &proc{cmd: cmd, lines: make(chan message, 16), stderr: &tailBuffer{max: 8 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			what, body, _ := strings.Cut(sc.Text(), " ")
			p.lines <- message{what: what, body: []byte(body)}
		}
		p.waitErr = cmd.Wait()
		close(p.exited)
		close(p.lines)
	}()
	return p, nil
}

// await returns the next message of kind what (errors and unexpected lines fail it).
func (p *proc) await(ctx context.Context, what string, timeout time.Duration, v any) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				<-p.exited
				return fmt.Errorf("the controller exited: %v: %s", p.waitErr, p.stderr.String())
			}
			if m.what == "error" {
				return fmt.Errorf("the controller says %s", m.body)
			}
			if m.what != what {
				continue // "ready" or "done" while another answer is awaited cannot happen; stats may
			}
			return json.Unmarshal(m.body, v)
		case <-t.C:
			return fmt.Errorf("no %q from the controller in %s: %s", what, timeout, p.stderr.String())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *proc) send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

func (p *proc) stats(ctx context.Context) (ctlbench.Stats, error) {
	var s ctlbench.Stats
	if err := p.send("stats"); err != nil {
		return s, err
	}
	return s, p.await(ctx, "stats", time.Minute, &s)
}

// stop closes stdin (the controller stops) and waits for the process, killing it after a
// minute.
func (p *proc) stop() error {
	p.stdin.Close()
	go func() {
		for range p.lines {
		}
	}()
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		return errors.New("the controller did not stop within a minute: killed")
	}
}

// cpu returns the process's user and system CPU time (utime+stime of /proc/<pid>/stat).
func (p *proc) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", p.cmd.Process.Pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// memory returns VmHWM (the peak resident set) and VmRSS of /proc/<pid>/status, in bytes.
func (p *proc) memory() (hwm, rss float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != "VmHWM" && k != "VmRSS" {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %v", k, err)
		}
		if k == "VmHWM" {
			hwm = kb * 1024
		} else {
			rss = kb * 1024
		}
	}
	return hwm, rss, nil
}

// tailBuffer keeps the last max bytes written to it (a controller's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
