// CuratorPeer is zkrecipes' yardstick and interop partner: Apache Curator's own
// recipes (Debian's libcurator-recipes-java), driven over stdin and stdout, so that Go
// tests and benchmarks can put a Java participant on the same ZooKeeper paths.
//
// Usage: CuratorPeer <command> <connect-string> <args...>
//   mutex    CONNECT PATH ID            hold an InterProcessMutex
//   read     CONNECT PATH ID            hold the read side of an InterProcessReadWriteLock
//   write    CONNECT PATH ID            hold the write side
//   lease    CONNECT PATH MAX ID        hold one InterProcessSemaphoreV2 lease
//   latch    CONNECT PATH ID            take part in a LeaderLatch
//   selector CONNECT PATH ID            take part in a LeaderSelector
//   count    CONNECT PATH COUNTER N ID  N times: lock, add 1 to COUNTER's number, unlock
//   protected NAME                      print whether Curator takes NAME for a protected node
//
// Output lines: READY, ACQUIRED <node>, RELEASED, LEADER, NOTLEADER, PARTICIPANT <id>
// <leader>, END, DONE, ERROR <message>. Input lines: "release" (give back what is
// held, then exit), "participants" (list them, then END). End of input and SIGTERM
// release too.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public final class CuratorPeer {
    private static final Object out = new Object();
    // finished lets a SIGTERM's shutdown hook wait until what was held is given back.
    private static final CountDownLatch finished = new CountDownLatch(1);

    private static void say(String line) {
        synchronized (out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("protected")) {
            say(Boolean.toString(ProtectedUtils.isProtectedZNode(args[1])));
            return;
        }
        if (args.length < 4) {
            System.err.println("usage: CuratorPeer mutex|read|write|lease|latch|selector|count CONNECT PATH ...");
            System.exit(64);
        }
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[1])
                .sessionTimeoutMs(Integer.getInteger("session", 4000))
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
        client.start();
        client.blockUntilConnected();
        try {
            run(client, args);
        } catch (Exception e) {
            say("ERROR " + e);
            System.exit(1);
        } finally {
            client.close();
            finished.countDown();
        }
    }

    private static void run(CuratorFramework client, String[] args) throws Exception {
        String command = args[0], path = args[2];
        switch (command) {
            case "mutex":
                hold(new InterProcessMutex(client, path) {
                    @Override
                    protected byte[] getLockNodeBytes() {
                        return args[3].getBytes(StandardCharsets.UTF_8);
                    }
                }, client, path);
                break;
            case "read":
            case "write": {
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, path,
                        args[3].getBytes(StandardCharsets.UTF_8));
                hold(command.equals("read") ? rw.readLock() : rw.writeLock(), client, path);
                break;
            }
            case "lease": {
                InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, Integer.parseInt(args[3]));
                semaphore.setNodeData(args[4].getBytes(StandardCharsets.UTF_8));
                Lease lease = semaphore.acquire();
                say("ACQUIRED " + path + "/leases/" + lease.getNodeName());
                awaitRelease(null);
                semaphore.returnLease(lease);
                say("RELEASED");
                break;
            }
            case "latch": {
                LeaderLatch latch = new LeaderLatch(client, path, args[3]);
                latch.addListener(new LeaderLatchListener() {
                    public void isLeader() { say("LEADER"); }
                    public void notLeader() { say("NOTLEADER"); }
                });
                latch.start();
                say("READY");
                awaitRelease(() -> participants(latch.getParticipants()));
                latch.close();
                say("RELEASED");
                break;
            }
            case "selector": {
                CountDownLatch done = new CountDownLatch(1);
                LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
                    public void takeLeadership(CuratorFramework c) throws Exception {
                        say("LEADER");
                        try {
                            done.await();
                        } finally {
                            say("NOTLEADER");
                        }
                    }
                });
                selector.setId(args[3]);
                selector.start();
                say("READY");
                awaitRelease(() -> participants(selector.getParticipants()));
                done.countDown();
                selector.close();
                say("RELEASED");
                break;
            }
            case "count": {
                String counter = args[3];
                int n = Integer.parseInt(args[4]);
                InterProcessMutex mutex = new InterProcessMutex(client, path);
                for (int i = 0; i < n; i++) {
                    mutex.acquire();
                    try {
                        Stat stat = new Stat();
                        int value = Integer.parseInt(new String(client.getData().storingStatIn(stat).forPath(counter), StandardCharsets.UTF_8));
                        client.setData().withVersion(stat.getVersion()).forPath(counter,
                                Integer.toString(value + 1).getBytes(StandardCharsets.UTF_8));
                    } finally {
                        mutex.release();
                    }
                }
                say("DONE");
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command " + command);
        }
    }

    private static void hold(InterProcessLock lock, CuratorFramework client, String path) throws Exception {
        lock.acquire();
        String node = lock instanceof InterProcessMutex ? ((InterProcessMutex) lock).getParticipantNodes().stream()
                .filter(p -> ownedBy(client, p)).findFirst().orElse("?") : "?";
        say("ACQUIRED " + node);
        awaitRelease(null);
        lock.release();
        say("RELEASED");
    }

    private static boolean ownedBy(CuratorFramework client, String node) {
        try {
            Stat stat = client.checkExists().forPath(node);
            return stat != null && stat.getEphemeralOwner() == client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return false;
        }
    }

    private interface Lister {
        void list() throws Exception;
    }

    private static void participants(java.util.Collection<Participant> ps) {
        for (Participant p : ps) {
            say("PARTICIPANT " + p.getId() + " " + p.isLeader());
        }
        say("END");
    }

    // awaitRelease reads commands until "release", end of input, or SIGTERM.
    private static void awaitRelease(Lister lister) throws Exception {
        CountDownLatch terminated = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    line = line.trim();
                    if (line.equals("release")) {
                        break;
                    }
                    if (line.equals("participants") && lister != null) {
                        lister.list();
                    }
                }
            } catch (Exception e) {
                say("ERROR " + e);
            }
            terminated.countDown();
        });
        reader.setDaemon(true);
        reader.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            terminated.countDown();
            try {
                finished.await(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        terminated.await();
    }
}
