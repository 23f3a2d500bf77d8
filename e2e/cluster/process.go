package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// spawner starts child processes from one goroutine locked to its OS thread.
//
// Children get PR_SET_PDEATHSIG=SIGKILL, so the kernel kills them when the test binary dies
// without running its cleanup (a panicking test, a -timeout, SIGKILL): no orphaned etcd or
// kube-apiserver. The kernel ties that signal to the *thread* that forked, not the process,
// and Go may end a thread that a goroutine leaves locked; forking from a thread that this
// goroutine holds for the cluster's whole life rules out a premature kill.
type spawner struct {
	reqs chan spawnReq
	quit chan struct{}
	done chan struct{}
}

type spawnReq struct {
	cmd    *exec.Cmd
	result chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for {
			select {
			case r := <-s.reqs:
				r.result <- r.cmd.Start()
			case <-s.quit:
				return
			}
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true // a terminal's Ctrl-C goes to the test binary, which stops us in order
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	r := spawnReq{cmd: cmd, result: make(chan error, 1)}
	select {
	case s.reqs <- r:
		return <-r.result
	case <-s.done:
		return errors.New("cluster is stopped")
	}
}

// close ends the spawner's goroutine. Call it only once every child has exited.
func (s *spawner) close() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
}

// process is one run of etcd or kube-apiserver, its output appended to logPath.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error         // valid after done
}

func startProcess(s *spawner, name, binary string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "=== %s: starting %s %s\n", time.Now().Format(time.RFC3339Nano), binary, strings.Join(args, " "))
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = os.Environ()
	if err := s.start(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		fmt.Fprintf(logFile, "=== %s: %s exited: %v\n", time.Now().Format(time.RFC3339Nano), name, cmd.ProcessState)
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs it, and waits
// until the process has been reaped. It returns an error only if the process had to be
// killed; an exit status caused by the SIGTERM itself is a clean stop.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not exit within %v of SIGTERM and was killed", p.name, grace)
}

// tail returns the last n lines of a log file ("" if it cannot be read).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
