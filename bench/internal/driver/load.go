package driver

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuSample is the machine's CPU time and the share of it spent by this process and
// its children (the ZooKeeper server and the Curator peer), in clock ticks, so that
// the report can say how busy the rest of the machine kept the CPUs: timings on a
// shared machine are only as good as its quiet.
type cpuSample struct {
	total, busy, ours int64
	loadavg           string
}

func sampleCPU() cpuSample {
	var s cpuSample
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(data), "\n")
		f := strings.Fields(line)
		// cpu user nice system idle iowait irq softirq steal [guest guest_nice]
		for i := 1; i < len(f) && i <= 8; i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			s.total += v
			if i != 4 && i != 5 {
				s.busy += v
			}
		}
	}
	self := os.Getpid()
	s.ours = procTicks(strconv.Itoa(self))
	if entries, err := os.ReadDir("/proc"); err == nil {
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			if ppid, ok := procParent(e.Name()); ok && ppid == self {
				s.ours += procTicks(e.Name())
			}
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(data))
		if len(f) >= 3 {
			s.loadavg = strings.Join(f[:3], " ")
		}
	}
	return s
}

// procStat is the fields of /proc/<pid>/stat after the command's name: state, ppid, ….
func procStat(pid string) []string {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

func procParent(pid string) (int, bool) {
	f := procStat(pid)
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// procTicks is a process's user and system time.
func procTicks(pid string) int64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// othersBusy is the share of the machine's CPU time that other processes used
// between a and b, from 0 to 1.
func othersBusy(a, b cpuSample) float64 {
	total := b.total - a.total
	if total <= 0 {
		return 0
	}
	others := (b.busy - a.busy) - (b.ours - a.ours)
	return max(0, float64(others)/float64(total))
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is a process's CPU time, to the clock tick.
func procCPU(pid string) time.Duration { return time.Duration(procTicks(pid)) * clockTick }

// selfCPU is this process's CPU time, to the microsecond.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childProcesses are the pids of our child processes whose command line contains s.
func childProcesses(s string) []int {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := procParent(e.Name()); !ok || ppid != self {
			continue
		}
		if cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(cmd), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}
