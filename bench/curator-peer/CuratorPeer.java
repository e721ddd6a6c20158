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
//   atomic   CONNECT PATH N DELTA [LOCK] on "start", N times: add DELTA with a DistributedAtomicLong
//                                       (promoted to a mutex at LOCK if given); DONE <succeeded> <failed>
//   sharedcount CONNECT PATH SEED       start a SharedCount; COUNT <value> <version> now and on every
//                                       change heard; input "set N", "tryset N" (from the version held)
//   cache    CONNECT PATH ID            keep a CuratorCache of PATH's subtree; "dump" lists it
//   cacheevents CONNECT PATH            keep a CuratorCache of PATH's subtree (PATH may not exist
//                                       yet), saying each event its listener hears:
//                                       EVENT <CREATED|CHANGED|DELETED> <path> <czxid> <version>
//                                       <base64 data> (the new node, the old one for DELETED);
//                                       READY once initialized; "dump" lists the copy as one block
//   watch    CONNECT PATH persistent|recursive  set a PersistentWatcher on PATH (PATH may not
//                                       exist): READY once set, RESET each time it is set again
//                                       (also when it hears the client connected, which may come
//                                       after the first setting), and for each event its watcher
//                                       hears WATCHED <type> <path> <zxid> (zxid "-" from 3.8's
//                                       client), or WATCHED None <state> for a connection event
//   group    CONNECT PATH ID PAYLOAD    be a GroupMember; input "members" lists them
//                                       (MEMBER <id> <payload>, then END), "payload P" sets ours
//   double   CONNECT PATH MEMBERS       DistributedDoubleBarrier: enter (ENTERED), then
//                                       on the input line "leave", leave (LEFT)
//   persistent CONNECT PATH DATA        keep an ephemeral PersistentNode (CREATED <path>)
//   discovery CONNECT BASEPATH          Curator's ServiceDiscovery (see DiscoveryPeer.java)
//   protected NAME                      print whether Curator takes NAME for a protected node
//   bench    CONNECT                    run benchmark workloads that bench/ sends (see Bench)
//
// Output lines: READY, ACQUIRED <node>, RELEASED, LEADER, NOTLEADER, PARTICIPANT <id>
// <leader>, NODE <path> <czxid> <version> <base64 data>, MEMBER <id> <payload>, END,
// DONE, ENTERED, LEFT, CREATED <path>, COUNT <value> <version>, SET, TRYSET <true|false>,
// EVENT ..., WATCHED ..., RESET,
// ERROR <message>. Input lines: "release" (give
// back what is held, then exit), "participants" (list them, then END), "dump" (a
// cache's nodes sorted by path, then END). End of input and SIGTERM release too.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.curator.framework.recipes.cache.TreeCacheEvent;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
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
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.recipes.watch.PersistentWatcher;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

public final class CuratorPeer {
    private static final Object out = new Object();
    // finished lets a SIGTERM's shutdown hook wait until what was held is given back.
    private static final CountDownLatch finished = new CountDownLatch(1);

    static void say(String line) {
        synchronized (out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        // What runs, from the jars the classes came from: a class path with another
        // version's jars first is seen, not trusted.
        if (args.length == 1 && args[0].equals("version")) {
            java.util.Properties pom = new java.util.Properties();
            try (java.io.InputStream in = CuratorFramework.class.getResourceAsStream(
                    "/META-INF/maven/org.apache.curator/curator-framework/pom.properties")) {
                pom.load(in);
            }
            say("VERSION curator=" + pom.getProperty("version") + " zookeeper=" + org.apache.zookeeper.Version.getVersion());
            return;
        }
        if (args.length == 2 && args[0].equals("protected")) {
            say(Boolean.toString(ProtectedUtils.isProtectedZNode(args[1])));
            return;
        }
        if (args.length == 2 && args[0].equals("bench")) {
            new Bench(args[1]).serve();
            return;
        }
        if (args.length < 4 && !(args.length == 3 && (args[0].equals("discovery") || args[0].equals("cacheevents")))) {
            System.err.println("usage: CuratorPeer mutex|read|write|lease|latch|selector|count|atomic|sharedcount|cache|cacheevents|watch|group|double|persistent CONNECT PATH ...");
            System.exit(64);
        }
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[1])
                .sessionTimeoutMs(Integer.getInteger("session", 4000))
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
        // Curator queues connection states and hands them to listeners on a thread of
        // its own, so a recipe's listener added just after blockUntilConnected can still
        // hear the first CONNECTED. ServiceDiscovery re-registers its instances on it,
        // which a test that registers at once sees as a removal and a second add (seen
        // on a busy machine). So no recipe is built before that state has been handed out.
        CountDownLatch connected = new CountDownLatch(1);
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.CONNECTED) {
                connected.countDown();
            }
        });
        client.start();
        client.blockUntilConnected();
        connected.await();
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
            case "group": {
                GroupMember member = new GroupMember(client, path, args[3], args[4].getBytes(StandardCharsets.UTF_8));
                member.start();
                say("READY");
                awaitRelease(null, line -> {
                    if (line.equals("members")) {
                        member.getCurrentMembers().forEach((id, payload) ->
                                say("MEMBER " + id + " " + new String(payload, StandardCharsets.UTF_8)));
                        say("END");
                    } else if (line.startsWith("payload ")) {
                        member.setThisData(line.substring("payload ".length()).getBytes(StandardCharsets.UTF_8));
                        say("DONE");
                    }
                });
                member.close();
                say("RELEASED");
                break;
            }
            case "cache": {
                CountDownLatch initialized = new CountDownLatch(1);
                CuratorCache cache = CuratorCache.build(client, path);
                cache.listenable().addListener(CuratorCacheListener.builder()
                        .forInitialized(initialized::countDown).build());
                cache.start();
                initialized.await();
                say("READY");
                awaitRelease(() -> {
                    cache.stream().sorted(Comparator.comparing(ChildData::getPath)).forEach(d -> say("NODE "
                            + d.getPath() + " " + d.getStat().getCzxid() + " " + d.getStat().getVersion() + " "
                            + Base64.getEncoder().encodeToString(d.getData() == null ? new byte[0] : d.getData())));
                    say("END");
                });
                cache.close();
                say("RELEASED");
                break;
            }
            case "cacheevents":
                cacheEvents(client, path);
                break;
            case "watch":
                watch(client, path, args[3]);
                break;
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
            case "atomic": {
                int n = Integer.parseInt(args[3]);
                long delta = Long.parseLong(args[4]);
                RetryNTimes retry = new RetryNTimes(10, 10);
                DistributedAtomicLong counter = args.length > 5
                        ? new DistributedAtomicLong(client, path, retry,
                                PromotedToLock.builder().lockPath(args[5]).retryPolicy(retry).build())
                        : new DistributedAtomicLong(client, path, retry);
                say("READY");
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                for (String line; (line = in.readLine()) != null && !line.trim().equals("start"); ) {
                }
                int succeeded = 0, failed = 0;
                for (int i = 0; i < n; i++) {
                    if (counter.add(delta).succeeded()) {
                        succeeded++;
                    } else {
                        failed++;
                    }
                }
                say("DONE " + succeeded + " " + failed);
                break;
            }
            case "sharedcount": {
                SharedCount count = new SharedCount(client, path, Integer.parseInt(args[3]));
                count.addListener(new SharedCountListener() {
                    public void countHasChanged(SharedCountReader reader, int value) {
                        sayCount(count);
                    }
                    public void stateChanged(CuratorFramework c, ConnectionState state) {}
                });
                count.start();
                sayCount(count);
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                for (String line; (line = in.readLine()) != null; ) {
                    String[] f = line.trim().split(" ");
                    if (f[0].equals("release")) {
                        break;
                    } else if (f[0].equals("set")) {
                        count.setCount(Integer.parseInt(f[1]));
                        say("SET");
                    } else if (f[0].equals("tryset")) {
                        say("TRYSET " + count.trySetCount(count.getVersionedValue(), Integer.parseInt(f[1])));
                    }
                }
                count.close();
                say("RELEASED");
                break;
            }
            case "double": {
                DistributedDoubleBarrier barrier = new DistributedDoubleBarrier(client, path, Integer.parseInt(args[3]));
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                say("READY");
                barrier.enter();
                say("ENTERED");
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("leave")) {
                    // wait for the word
                }
                if (line != null) {
                    barrier.leave();
                    say("LEFT");
                }
                break;
            }
            case "discovery":
                DiscoveryPeer.run(client, path);
                break;
            case "persistent": {
                PersistentNode node = new PersistentNode(client, CreateMode.EPHEMERAL, false, path,
                        args[3].getBytes(StandardCharsets.UTF_8));
                node.start();
                if (!node.waitForInitialCreate(30, TimeUnit.SECONDS)) {
                    throw new IOException("the node was not created within 30 s");
                }
                say("CREATED " + node.getActualPath());
                awaitRelease(null);
                node.close();
                say("RELEASED");
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command " + command);
        }
    }

    // cacheEvents says every event of a CuratorCache's listener, and its copy on "dump"
    // in one block that no event line interrupts.
    private static void cacheEvents(CuratorFramework client, String path) throws Exception {
        CountDownLatch initialized = new CountDownLatch(1);
        CuratorCache cache = CuratorCache.build(client, path);
        cache.listenable().addListener(new CuratorCacheListener() {
            public void event(CuratorCacheListener.Type type, ChildData before, ChildData after) {
                say("EVENT " + type + " " + nodeLine(type == CuratorCacheListener.Type.NODE_DELETED ? before : after));
            }

            public void initialized() {
                initialized.countDown();
            }
        });
        cache.start();
        if (!initialized.await(60, TimeUnit.SECONDS)) {
            throw new IOException("the cache did not initialize within 60 s");
        }
        say("READY");
        awaitRelease(() -> {
            synchronized (out) {
                cache.stream().sorted(Comparator.comparing(ChildData::getPath)).forEach(d -> say("NODE " + nodeLine(d)));
                say("END");
            }
        });
        cache.close();
        say("RELEASED");
    }

    // nodeLine is a node as cacheEvents writes it: path, czxid, version, base64 data.
    private static String nodeLine(ChildData d) {
        return d.getPath() + " " + d.getStat().getCzxid() + " " + d.getStat().getVersion() + " "
                + Base64.getEncoder().encodeToString(d.getData() == null ? new byte[0] : d.getData());
    }

    // watch says every event of a PersistentWatcher's watcher, and each time the watch
    // is set (READY the first time, then RESET).
    private static void watch(CuratorFramework client, String path, String mode) throws Exception {
        if (!mode.equals("persistent") && !mode.equals("recursive")) {
            throw new IllegalArgumentException("watch mode " + mode + ": persistent or recursive");
        }
        PersistentWatcher watcher = new PersistentWatcher(client, path, mode.equals("recursive"));
        AtomicBoolean set = new AtomicBoolean();
        watcher.getResetListenable().addListener(() -> say(set.getAndSet(true) ? "RESET" : "READY"));
        watcher.getListenable().addListener(event -> {
            if (event.getType() == Watcher.Event.EventType.None) {
                say("WATCHED None " + event.getState());
            } else {
                say("WATCHED " + event.getType() + " " + event.getPath() + " " + zxidOf(event));
            }
        });
        watcher.start();
        awaitRelease(null);
        watcher.close();
        say("RELEASED");
    }

    // zxidOf is the zxid a notification carries, from ZooKeeper 3.9's client on ("-"
    // from 3.8's, which has no such field): looked up at run time, so that the peer
    // compiles against both. Curator 5.7's PersistentWatcher passes -1 even so.
    private static String zxidOf(WatchedEvent event) {
        try {
            return String.valueOf(event.getClass().getMethod("getZxid").invoke(event));
        } catch (ReflectiveOperationException e) {
            return "-";
        }
    }

    private static void sayCount(SharedCount count) {
        VersionedValue<Integer> v = count.getVersionedValue();
        say("COUNT " + v.getValue() + " " + v.getVersion());
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

    interface Lister {
        void list() throws Exception;
    }

    interface Commands {
        void run(String line) throws Exception;
    }

    private static void participants(java.util.Collection<Participant> ps) {
        for (Participant p : ps) {
            say("PARTICIPANT " + p.getId() + " " + p.isLeader());
        }
        say("END");
    }

    // awaitRelease reads commands until "release", end of input, or SIGTERM.
    private static void awaitRelease(Lister lister) throws Exception {
        awaitRelease(lister, null);
    }

    // commands, if given, receives every other line.
    static void awaitRelease(Lister lister, Commands commands) throws Exception {
        CountDownLatch terminated = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    line = line.trim();
                    if (line.equals("release")) {
                        break;
                    }
                    if ((line.equals("participants") || line.equals("dump")) && lister != null) {
                        lister.list();
                    } else if (commands != null) {
                        commands.run(line);
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

    // Bench runs the workloads of the benchmark driver (bench/, in Go) with Curator's
    // recipes, one workload at a time, each in sessions of its own, so that the driver
    // can read the server's counters around exactly the measured part. One line each:
    //   peer:   READY
    //   driver: a workload, one of
    //     cycles PATH WARMUP N                  one session: WARMUP untimed, then N timed
    //                                           acquire+release cycles of an InterProcessMutex
    //     mutex PATH SESSIONS MILLIS            each session loops on one InterProcessMutex
    //     rwlock PATH READERS WRITERS MILLIS    read or write side of an InterProcessReadWriteLock
    //     semaphore PATH SESSIONS LEASES MILLIS one lease of an InterProcessSemaphoreV2 at a time
    //     handover PATH ROUNDS SETTLE_MS PARTICIPANTS SESSIONS
    //                                           PARTICIPANTS LeaderLatches spread over SESSIONS
    //                                           hand the leadership on ROUNDS times
    //     queue PATH WAITERS SESSIONS           WAITERS threads queue behind a holder, then drain
    //     counter PATH SESSIONS MILLIS          each session loops on add(1) of a DistributedAtomicLong
    //                                           at PATH/count promoted to a lock at PATH/lock
    //     and the cache and group workloads of recipeTrial, and DiscoveryPeer.benchTrial's
    //   peer:   SET (its sessions are connected)   driver: go
    //   peer:   QUEUED (queue, handover)           driver: drain
    //   peer:   RESULT {"ops":..,"total":..,"reads":..,"writes":..,"nanos":..,"lat":[..]}
    //           (counter: and "failed", the adds that did not succeed)
    //   driver: close                              peer: CLOSED (its sessions are closed)
    // A failure prints ERROR <message>, then closes the sessions and prints CLOSED.
    // A timed workload counts in ops (and reads or writes) the acquisitions made before
    // its deadline, then lets every worker finish the cycle it is in; total counts all.
    // nanos is the timed window; lat holds one latency per cycle or hand-over, in ns.
    static final class Bench {
        private final String connect;
        private final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        private final List<CuratorFramework> clients = new ArrayList<>();
        private final List<AutoCloseable> recipes = new ArrayList<>(); // closed before the clients

        Bench(String connect) {
            this.connect = connect;
        }

        private interface Trial {
            String run() throws Exception;
        }

        // Locker is one participant of a timed workload.
        private abstract static class Locker {
            final boolean writer;

            Locker(boolean writer) {
                this.writer = writer;
            }

            abstract void acquire() throws Exception;

            abstract void release() throws Exception;
        }

        void serve() throws Exception {
            say("READY");
            for (String line; (line = in.readLine()) != null; ) {
                line = line.trim();
                if (line.isEmpty()) {
                    continue;
                }
                try {
                    Trial trial = prepare(line.split(" "));
                    say("SET");
                    expect("go");
                    say("RESULT " + trial.run());
                    expect("close");
                } catch (Exception e) {
                    say("ERROR " + e.toString().replace('\n', ' '));
                } finally {
                    for (AutoCloseable c : recipes) {
                        c.close();
                    }
                    recipes.clear();
                    for (CuratorFramework c : clients) {
                        c.close();
                    }
                    clients.clear();
                }
                say("CLOSED");
            }
        }

        private void expect(String want) throws IOException {
            String line = in.readLine();
            if (line == null || !line.trim().equals(want)) {
                throw new IOException("expected " + want + ", got " + line);
            }
        }

        private CuratorFramework[] sessions(int n) throws Exception {
            CuratorFramework[] cs = new CuratorFramework[n];
            for (int i = 0; i < n; i++) {
                cs[i] = CuratorFrameworkFactory.builder()
                        .connectString(connect)
                        .sessionTimeoutMs(60000)
                        .connectionTimeoutMs(15000)
                        .retryPolicy(new ExponentialBackoffRetry(100, 10))
                        .build();
                clients.add(cs[i]);
                cs[i].start();
            }
            for (CuratorFramework c : cs) {
                if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
                    throw new IOException("no session within 30 s");
                }
            }
            return cs;
        }

        private Trial prepare(String[] f) throws Exception {
            String path = f[1];
            List<Locker> lockers = new ArrayList<>();
            switch (f[0]) {
                case "cycles": {
                    int warmup = Integer.parseInt(f[2]), n = Integer.parseInt(f[3]);
                    InterProcessMutex m = new InterProcessMutex(sessions(1)[0], path);
                    for (int i = 0; i < warmup; i++) {
                        m.acquire();
                        m.release();
                    }
                    return () -> {
                        long[] lat = new long[n];
                        long start = System.nanoTime();
                        for (int i = 0; i < n; i++) {
                            long t = System.nanoTime();
                            m.acquire();
                            m.release();
                            lat[i] = System.nanoTime() - t;
                        }
                        return json(n, n, 0, 0, System.nanoTime() - start, lat);
                    };
                }
                case "mutex": {
                    for (CuratorFramework c : sessions(Integer.parseInt(f[2]))) {
                        lockers.add(locker(new InterProcessMutex(c, path), false));
                    }
                    long millis = Long.parseLong(f[3]);
                    return () -> timed(lockers, millis);
                }
                case "rwlock": {
                    int readers = Integer.parseInt(f[2]), writers = Integer.parseInt(f[3]);
                    CuratorFramework[] cs = sessions(readers + writers);
                    for (int i = 0; i < cs.length; i++) {
                        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(cs[i], path);
                        lockers.add(i < readers ? locker(rw.readLock(), false) : locker(rw.writeLock(), true));
                    }
                    long millis = Long.parseLong(f[4]);
                    return () -> timed(lockers, millis);
                }
                case "semaphore": {
                    int leases = Integer.parseInt(f[3]);
                    for (CuratorFramework c : sessions(Integer.parseInt(f[2]))) {
                        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(c, path, leases);
                        lockers.add(new Locker(false) {
                            private Lease lease;

                            void acquire() throws Exception {
                                lease = semaphore.acquire();
                            }

                            void release() throws Exception {
                                semaphore.returnLease(lease);
                            }
                        });
                    }
                    long millis = Long.parseLong(f[4]);
                    return () -> timed(lockers, millis);
                }
                case "handover": {
                    int rounds = Integer.parseInt(f[2]), participants = Integer.parseInt(f[4]);
                    long settle = Long.parseLong(f[3]);
                    CuratorFramework[] cs = sessions(Integer.parseInt(f[5]));
                    return () -> handover(cs, path, rounds, settle, participants);
                }
                case "queue": {
                    int waiters = Integer.parseInt(f[2]), n = Integer.parseInt(f[3]);
                    CuratorFramework[] cs = sessions(n + 1);
                    return () -> queue(cs, path, waiters);
                }
                case "cache-load":
                case "cache-load-treecache":
                case "cache-propagation":
                case "cache-storm":
                case "group-join":
                    return recipeTrial(f);
                case "discovery-register":
                case "discovery-load":
                case "discovery-pick": {
                    java.util.concurrent.Callable<String> trial = DiscoveryPeer.benchTrial(f, sessions(2), recipes);
                    return trial::call;
                }
                case "counter": {
                    int n = Integer.parseInt(f[2]);
                    long millis = Long.parseLong(f[3]);
                    CuratorFramework[] cs = sessions(n);
                    List<DistributedAtomicLong> counters = new ArrayList<>();
                    for (CuratorFramework c : cs) {
                        counters.add(new DistributedAtomicLong(c, path + "/count", counterRetry(),
                                PromotedToLock.builder().lockPath(path + "/lock").retryPolicy(counterRetry()).build()));
                    }
                    return () -> adds(counters, millis);
                }
                default:
                    throw new IllegalArgumentException("unknown workload " + f[0]);
            }
        }

        // recipeTrial prepares the cache and group workloads (bench/internal/driver/cache.go):
        //   cache-load PATH F1 F2 F3          a tree of F1 nodes with F2 children with F3 children
        //                                     is made, then a CuratorCache of it loads; nanos is the
        //                                     time until initialized, heap the JVM's used heap after
        //                                     System.gc(), per cached node, loaded less the lower of before and closed;
        //                                     once loaded it says LOADED and waits for "count" before closing
        //   cache-load-treecache PATH F1 F2 F3  the same with a TreeCache: one-shot watches, two a node,
        //                                     as ours (a CuratorCache on ZooKeeper 3.6+ sets one persistent
        //                                     recursive watch for the whole tree, which go-zookeeper lacks)
        //   cache-propagation PATH N          a second session sets PATH/n0 N times; lat is each
        //                                     set until the cache's listener hears its version
        //   cache-storm PATH NODES N          a second session sets NODES nodes N times, round
        //                                     robin; nanos is until the copy has every last version
        //   group-join PATH N MEMBERS         a second session joins N GroupMembers one at a time;
        //                                     lat is each until the first member's view has it; the
        //                                     group has MEMBERS before (the first included), each on
        //                                     a session of its own, and heap is the used heap they
        //                                     took, per member known (MEMBERS²); changer is
        //                                     the second session's id
        private Trial recipeTrial(String[] f) throws Exception {
            String path = f[1];
            CuratorFramework[] cs = sessions(2);
            switch (f[0]) {
                case "cache-load":
                case "cache-load-treecache": {
                    int[] fanout = {Integer.parseInt(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4])};
                    int nodes = makeTree(cs[1], path, fanout) + 1;
                    boolean tree = f[0].equals("cache-load-treecache");
                    return () -> {
                        long before = usedHeap();
                        long start = System.nanoTime();
                        TreeCache tc = tree ? startTreeCache(cs[0], path) : null;
                        CuratorCache cc = tree ? null : startCache(cs[0], path, null);
                        long nanos = System.nanoTime() - start;
                        java.io.Closeable cache = tree ? tc : cc;
                        int size = tree ? treeSize(tc, path) : cc.size();
                        if (size != nodes) {
                            throw new IOException("the cache holds " + size + " nodes, not " + nodes);
                        }
                        // The heap with the copy, less the lower of the readings before the
                        // load and after closing the cache and its client (the session's close
                        // adds requests): either sometimes still holds a copy, the previous
                        // trial's or this one, that the JVM lets go of only later.
                        long heap1 = usedHeap();
                        // The driver counts the server's watches while the copy is open.
                        say("LOADED");
                        expect("count");
                        cache.close();
                        cs[0].close();
                        long heap0 = Math.min(before, usedHeap());
                        String r = json(nodes, nodes, 0, 0, nanos, null);
                        return with(r, "heap", (double) (heap1 - heap0) / nodes);
                    };
                }
                case "cache-propagation": {
                    int n = Integer.parseInt(f[2]);
                    makeTree(cs[1], path, new int[] {10});
                    String p = path + "/n0";
                    java.util.concurrent.LinkedBlockingQueue<Integer> heard = new java.util.concurrent.LinkedBlockingQueue<>();
                    startCache(cs[0], path, (before, after) -> {
                        if (after.getPath().equals(p)) {
                            heard.add(after.getStat().getVersion());
                        }
                    });
                    return () -> {
                        long[] lat = new long[n];
                        long start = System.nanoTime();
                        for (int i = 0; i < n; i++) {
                            long t0 = System.nanoTime();
                            Stat st = cs[1].setData().forPath(p, Integer.toString(i).getBytes(StandardCharsets.UTF_8));
                            for (Integer v; (v = heard.poll(30, TimeUnit.SECONDS)) == null || v < st.getVersion(); ) {
                                if (v == null) {
                                    throw new IOException("no change heard within 30 s");
                                }
                            }
                            lat[i] = System.nanoTime() - t0;
                        }
                        return json(n, n, 0, 0, System.nanoTime() - start, lat);
                    };
                }
                case "cache-storm": {
                    int nodes = Integer.parseInt(f[2]), n = Integer.parseInt(f[3]);
                    makeTree(cs[1], path, new int[] {nodes});
                    CuratorCache cache = startCache(cs[0], path, null);
                    return () -> {
                        java.util.Map<String, Integer> last = new java.util.HashMap<>();
                        long start = System.nanoTime();
                        for (int i = 0; i < n; i++) {
                            String p = path + "/n" + (i % nodes);
                            last.put(p, cs[1].setData().forPath(p, Integer.toString(i).getBytes(StandardCharsets.UTF_8)).getVersion());
                        }
                        pollUntil(() -> last.entrySet().stream().allMatch(e -> cache.get(e.getKey())
                                .map(d -> d.getStat().getVersion() == e.getValue()).orElse(false)));
                        return json(n, n, 0, 0, System.nanoTime() - start, null);
                    };
                }
                case "group-join": {
                    int n = Integer.parseInt(f[2]), members = Integer.parseInt(f[3]);
                    GroupMember watcher = new GroupMember(cs[0], path, "watcher");
                    recipes.add(watcher);
                    watcher.start();
                    double heap = formGroup(path, watcher, members);
                    return () -> {
                        long[] lat = new long[n];
                        long start = System.nanoTime();
                        for (int i = 0; i < n; i++) {
                            String id = "m" + i;
                            long t0 = System.nanoTime();
                            GroupMember m = new GroupMember(cs[1], path, id);
                            m.start();
                            pollUntil(() -> watcher.getCurrentMembers().containsKey(id));
                            lat[i] = System.nanoTime() - t0;
                            m.close();
                            pollUntil(() -> !watcher.getCurrentMembers().containsKey(id));
                        }
                        String r = json(n, n, 0, 0, System.nanoTime() - start, lat);
                        // The joiner's session, so that the driver can tell its requests
                        // from the followers'.
                        r = with(r, "changer", cs[1].getZookeeperClient().getZooKeeper().getSessionId());
                        return members > 1 ? with(r, "heap", heap) : r;
                    };
                }
                default:
                    throw new IllegalArgumentException("unknown workload " + f[0]);
            }
        }

        // formGroup makes the group members strong, the watcher included, each other member
        // on a session of its own, and returns once every member's view has them all: the
        // used heap the members took (from after their sessions connected), per member known.
        private double formGroup(String path, GroupMember watcher, int members) throws Exception {
            if (members < 2) {
                return 0;
            }
            CuratorFramework[] cs = sessions(members - 1);
            long before = usedHeap();
            List<GroupMember> all = new ArrayList<>(List.of(watcher));
            for (int i = 0; i < cs.length; i++) {
                GroupMember m = new GroupMember(cs[i], path, "g" + i, new byte[0]);
                recipes.add(m);
                m.start();
                all.add(m);
            }
            for (GroupMember m : all) {
                pollUntil(() -> m.getCurrentMembers().size() == members, 600);
            }
            return (double) (usedHeap() - before) / ((double) members * members);
        }

        private CuratorCache startCache(CuratorFramework c, String path,
                java.util.function.BiConsumer<ChildData, ChildData> onChange) throws Exception {
            CuratorCache cache = CuratorCache.build(c, path);
            recipes.add(cache);
            CountDownLatch initialized = new CountDownLatch(1);
            org.apache.curator.framework.recipes.cache.CuratorCacheListenerBuilder b = CuratorCacheListener.builder().forInitialized(initialized::countDown);
            if (onChange != null) {
                b = b.forChanges(onChange::accept);
            }
            cache.listenable().addListener(b.build());
            cache.start();
            if (!initialized.await(120, TimeUnit.SECONDS)) {
                throw new IOException("the cache did not initialize within 120 s");
            }
            return cache;
        }

        private TreeCache startTreeCache(CuratorFramework c, String path) throws Exception {
            TreeCache cache = TreeCache.newBuilder(c, path).build();
            recipes.add(cache);
            CountDownLatch initialized = new CountDownLatch(1);
            cache.getListenable().addListener((client, event) -> {
                if (event.getType() == TreeCacheEvent.Type.INITIALIZED) {
                    initialized.countDown();
                }
            });
            cache.start();
            if (!initialized.await(120, TimeUnit.SECONDS)) {
                throw new IOException("the tree cache did not initialize within 120 s");
            }
            return cache;
        }

        // treeSize counts the nodes of a TreeCache's copy at and below path.
        private static int treeSize(TreeCache cache, String path) {
            java.util.Map<String, ChildData> kids = cache.getCurrentChildren(path);
            if (kids == null) {
                return 0;
            }
            int n = 1;
            for (String name : kids.keySet()) {
                n += treeSize(cache, path.equals("/") ? "/" + name : path + "/" + name);
            }
            return n;
        }

        // makeTree makes path if missing and below it fanout[0] children n0.., each with fanout[1]
        // children, and so on, 64 bytes each, in transactions of 500; it returns how many.
        private static int makeTree(CuratorFramework c, String path, int[] fanout) throws Exception {
            byte[] data = new byte[64];
            if (c.checkExists().forPath(path) == null) { // the driver makes it, as for every workload
                c.create().creatingParentsIfNeeded().forPath(path);
            }
            List<String> level = List.of(path);
            int made = 0;
            for (int f : fanout) {
                List<String> next = new ArrayList<>();
                List<org.apache.curator.framework.api.transaction.CuratorOp> batch = new ArrayList<>();
                for (String parent : level) {
                    for (int i = 0; i < f; i++) {
                        String p = parent + "/n" + i;
                        batch.add(c.transactionOp().create().forPath(p, data));
                        next.add(p);
                        if (batch.size() == 500) {
                            c.transaction().forOperations(batch);
                            batch.clear();
                        }
                    }
                }
                if (!batch.isEmpty()) {
                    c.transaction().forOperations(batch);
                }
                made += next.size();
                level = next;
            }
            return made;
        }

        // usedHeap is the used heap after System.gc(), once two readings 100 ms apart
        // agree within 64 KiB: a closed CuratorCache lets go of its copy a moment later.
        static long usedHeap() throws InterruptedException {
            Runtime rt = Runtime.getRuntime();
            long last = -1;
            for (int i = 0; i < 20; i++) {
                System.gc();
                long used = rt.totalMemory() - rt.freeMemory();
                if (last >= 0 && Math.abs(used - last) < 64 * 1024) {
                    return used;
                }
                last = used;
                Thread.sleep(100);
            }
            return last;
        }

        static void pollUntil(java.util.function.BooleanSupplier done) throws Exception {
            pollUntil(done, 120);
        }

        static void pollUntil(java.util.function.BooleanSupplier done, long seconds) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!done.getAsBoolean()) {
                if (System.nanoTime() > end) {
                    throw new IOException("not within " + seconds + " s");
                }
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
            }
        }

        private static Locker locker(InterProcessLock lock, boolean writer) {
            return new Locker(writer) {
                void acquire() throws Exception {
                    lock.acquire();
                }

                void release() throws Exception {
                    lock.release();
                }
            };
        }

        // timed runs every locker in a thread of its own, acquiring and releasing in a
        // loop, for millis.
        private static String timed(List<Locker> lockers, long millis) throws Exception {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong ops = new AtomicLong(), total = new AtomicLong(), reads = new AtomicLong(), writes = new AtomicLong();
            AtomicReference<Exception> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            long start = System.nanoTime(), deadline = start + millis * 1_000_000L;
            for (Locker l : lockers) {
                Thread t = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            l.acquire();
                            long now = System.nanoTime();
                            l.release();
                            total.incrementAndGet();
                            if (now < deadline) {
                                ops.incrementAndGet();
                                (l.writer ? writes : reads).incrementAndGet();
                            }
                        }
                    } catch (Exception e) {
                        failure.compareAndSet(null, e);
                        stop.set(true);
                    }
                });
                threads.add(t);
                t.start();
            }
            Thread.sleep(millis);
            stop.set(true);
            join(threads);
            if (failure.get() != null) {
                throw failure.get();
            }
            return json(ops.get(), total.get(), reads.get(), writes.get(), millis * 1_000_000L, null);
        }

        // counterRetry is the counter's retry policy, for its optimistic tries and under
        // its lock: the same schedule as the default of zkrecipes' counter.
        private static org.apache.curator.RetryPolicy counterRetry() {
            return new org.apache.curator.retry.BoundedExponentialBackoffRetry(10, 1000, 10);
        }

        // adds runs every counter in a thread of its own, adding 1 in a loop, for millis;
        // an add that did not succeed (the retries ran out) is counted in failed.
        private static String adds(List<DistributedAtomicLong> counters, long millis) throws Exception {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong ops = new AtomicLong(), total = new AtomicLong(), failed = new AtomicLong();
            AtomicReference<Exception> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            long deadline = System.nanoTime() + millis * 1_000_000L;
            for (DistributedAtomicLong counter : counters) {
                Thread t = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            if (!counter.add(1L).succeeded()) {
                                failed.incrementAndGet();
                                continue;
                            }
                            total.incrementAndGet();
                            if (System.nanoTime() < deadline) {
                                ops.incrementAndGet();
                            }
                        }
                    } catch (Exception e) {
                        failure.compareAndSet(null, e);
                        stop.set(true);
                    }
                });
                threads.add(t);
                t.start();
            }
            Thread.sleep(millis);
            stop.set(true);
            join(threads);
            if (failure.get() != null) {
                throw failure.get();
            }
            String r = json(ops.get(), total.get(), 0, 0, millis * 1_000_000L, null);
            return with(r, "failed", failed.get());
        }

        private static void join(List<Thread> threads) throws Exception {
            join(threads, 120);
        }

        // join waits for every worker, for at most seconds in all (a hang is a bug to
        // report, not a figure).
        private static void join(List<Thread> threads, long seconds) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            for (Thread t : threads) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
                if (t.isAlive()) {
                    throw new IOException("a worker did not finish within " + seconds + " s");
                }
            }
        }

        // Candidate is a LeaderLatch that says on leads, with its index, when its listener
        // hears it leads.
        private static final class Candidate {
            final LeaderLatch latch;
            final CuratorFramework session;

            Candidate(CuratorFramework c, String path, int index, java.util.concurrent.BlockingQueue<long[]> leads) throws Exception {
                session = c;
                latch = new LeaderLatch(c, path, "bench");
                latch.addListener(new LeaderLatchListener() {
                    public void isLeader() {
                        leads.offer(new long[] {index, System.nanoTime()});
                    }

                    public void notLeader() {
                    }
                });
                latch.start();
            }
        }

        // handover: the first candidate joins and leads, then the others join, spread over
        // the sessions, and have settle ms to queue up; then QUEUED, and the driver looks at
        // the server until it says drain. Each round the leader closes its latch; the latency
        // is from the call to close until the next candidate's listener hears it leads; the
        // old leader's session joins again at the back, with settle ms to queue up. The
        // candidates left are closed with the trial.
        private String handover(CuratorFramework[] cs, String path, int rounds, long settle, int participants) throws Exception {
            java.util.concurrent.BlockingQueue<long[]> leads = new java.util.concurrent.LinkedBlockingQueue<>();
            List<Candidate> candidates = new ArrayList<>();
            long[] lat = new long[rounds];
            long start;
            try {
                candidates.add(new Candidate(cs[0], path, 0, leads));
                long[] leader = awaitLead(leads);
                for (int i = 1; i < participants; i++) {
                    candidates.add(new Candidate(cs[i % cs.length], path, i, leads));
                }
                Thread.sleep(settle);
                say("QUEUED");
                expect("drain");
                start = System.nanoTime();
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    Candidate old = candidates.set((int) leader[0], null);
                    old.latch.close();
                    long[] next = awaitLead(leads);
                    lat[r] = next[1] - t0;
                    candidates.add(new Candidate(old.session, path, candidates.size(), leads));
                    leader = next;
                    Thread.sleep(settle);
                }
            } finally {
                for (Candidate c : candidates) {
                    if (c != null) {
                        recipes.add(c.latch);
                    }
                }
            }
            return json(rounds, rounds, 0, 0, System.nanoTime() - start, lat);
        }

        private static long[] awaitLead(java.util.concurrent.BlockingQueue<long[]> leads) throws Exception {
            long[] l = leads.poll(30, TimeUnit.SECONDS);
            if (l == null) {
                throw new IOException("no leader within 30 s");
            }
            return l;
        }

        // queue: cs[0] holds the lock while waiters threads queue behind it, spread over
        // the other sessions; the driver looks at the server, then the holder releases
        // and each waiter acquires once and releases. nanos is the drain.
        private String queue(CuratorFramework[] cs, String path, int waiters) throws Exception {
            InterProcessMutex holder = new InterProcessMutex(cs[0], path);
            holder.acquire();
            AtomicReference<Exception> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                InterProcessMutex m = new InterProcessMutex(cs[1 + i % (cs.length - 1)], path);
                Thread t = new Thread(() -> {
                    try {
                        m.acquire();
                        m.release();
                    } catch (Exception e) {
                        failure.compareAndSet(null, e);
                    }
                });
                threads.add(t);
                t.start();
            }
            say("QUEUED");
            expect("drain");
            long start = System.nanoTime();
            holder.release();
            // A drain of thousands on a busy machine takes minutes: the bound grows with
            // the queue, within the driver's own (measure.go's budget).
            join(threads, 120 + waiters / 12);
            long nanos = System.nanoTime() - start;
            if (failure.get() != null) {
                throw failure.get();
            }
            return json(waiters + 1, waiters + 1, 0, 0, nanos, null);
        }

        // with is a RESULT's JSON object with one more number in it.
        static String with(String json, String key, Object value) {
            return json.substring(0, json.length() - 1) + ",\"" + key + "\":" + value + "}";
        }

        static String json(long ops, long total, long reads, long writes, long nanos, long[] lat) {
            StringBuilder b = new StringBuilder();
            b.append("{\"ops\":").append(ops).append(",\"total\":").append(total)
                    .append(",\"reads\":").append(reads).append(",\"writes\":").append(writes)
                    .append(",\"nanos\":").append(nanos);
            if (lat != null) {
                b.append(",\"lat\":[");
                for (int i = 0; i < lat.length; i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    b.append(lat[i]);
                }
                b.append(']');
            }
            return b.append('}').toString();
        }
    }
}
