// DiscoveryPeer is the Curator peer's service discovery side: Curator's own
// curator-x-discovery (Debian's libcurator-discovery-java) driven over stdin and
// stdout, so that Go tests can check the two sides read each other's instances.
//
// Usage: CuratorPeer discovery CONNECT BASEPATH, then input lines:
//   register NAME ID ADDRESS PORT SSLPORT URISPEC K=V[,K=V...]
//                          register an instance (port or sslPort "-" for none) with a
//                          Map payload; REGISTERED <the JSON Curator wrote>
//   update NAME ID ADDRESS  change a registered instance's address; UPDATED
//   unregister NAME ID      UNREGISTERED
//   query NAME ID           queryForInstance: INSTANCE <every field as JSON, and "uri",
//                          its buildUriSpec()>, or INSTANCE null
//   pick NAME               a ServiceProvider's getInstance (one provider per name, kept):
//                          PICKED <id or null>
//   cache NAME              start a ServiceCache; CACHE <its instances as JSON> now and on
//                          every change it reports
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

final class DiscoveryPeer {
    private static final ObjectMapper mapper = new ObjectMapper();

    private final ServiceDiscovery<Object> discovery;
    private final Map<String, ServiceInstance<Object>> registered = new HashMap<>();
    private final Map<String, ServiceProvider<Object>> providers = new HashMap<>();
    private final List<ServiceCache<Object>> caches = new ArrayList<>();

    private DiscoveryPeer(CuratorFramework client, String basePath) throws Exception {
        discovery = ServiceDiscoveryBuilder.builder(Object.class).client(client).basePath(basePath).build();
        discovery.start();
    }

    static void run(CuratorFramework client, String basePath) throws Exception {
        DiscoveryPeer peer = new DiscoveryPeer(client, basePath);
        CuratorPeer.say("READY");
        CuratorPeer.awaitRelease(null, line -> peer.command(line.split(" ")));
        for (ServiceCache<Object> cache : peer.caches) {
            cache.close();
        }
        for (ServiceProvider<Object> provider : peer.providers.values()) {
            provider.close();
        }
        peer.discovery.close();
        CuratorPeer.say("RELEASED");
    }

    private void command(String[] f) throws Exception {
        switch (f[0]) {
            case "register": {
                Map<String, String> payload = new HashMap<>();
                for (String kv : f[7].split(",")) {
                    String[] p = kv.split("=", 2);
                    payload.put(p[0], p[1]);
                }
                ServiceInstance<Object> in = ServiceInstance.builder().name(f[1]).id(f[2]).address(f[3])
                        .port(f[4].equals("-") ? null : Integer.valueOf(f[4]))
                        .sslPort(f[5].equals("-") ? null : Integer.valueOf(f[5]))
                        .uriSpec(new UriSpec(f[6])).payload(payload).build();
                discovery.registerService(in);
                registered.put(f[1] + "/" + f[2], in);
                byte[] wrote = new JsonInstanceSerializer<>(Object.class).serialize(in);
                CuratorPeer.say("REGISTERED " + new String(wrote, StandardCharsets.UTF_8));
                break;
            }
            case "update": {
                ServiceInstance<Object> old = registered.get(f[1] + "/" + f[2]);
                ServiceInstance<Object> in = ServiceInstance.builder().name(old.getName()).id(old.getId())
                        .address(f[3]).port(old.getPort()).sslPort(old.getSslPort()).uriSpec(old.getUriSpec())
                        .payload(old.getPayload()).registrationTimeUTC(old.getRegistrationTimeUTC()).build();
                discovery.updateService(in);
                registered.put(f[1] + "/" + f[2], in);
                CuratorPeer.say("UPDATED");
                break;
            }
            case "unregister":
                discovery.unregisterService(registered.remove(f[1] + "/" + f[2]));
                CuratorPeer.say("UNREGISTERED");
                break;
            case "query": {
                ServiceInstance<Object> in = discovery.queryForInstance(f[1], f[2]);
                CuratorPeer.say("INSTANCE " + (in == null ? "null" : mapper.writeValueAsString(fields(in))));
                break;
            }
            case "pick": {
                ServiceProvider<Object> provider = providers.get(f[1]);
                if (provider == null) {
                    provider = discovery.serviceProviderBuilder().serviceName(f[1]).build();
                    provider.start();
                    providers.put(f[1], provider);
                }
                ServiceInstance<Object> in = provider.getInstance();
                CuratorPeer.say("PICKED " + (in == null ? "null" : in.getId()));
                break;
            }
            case "cache": {
                ServiceCache<Object> cache = discovery.serviceCacheBuilder().name(f[1]).build();
                cache.addListener(new ServiceCacheListener() {
                    @Override
                    public void cacheChanged() {
                        sayCache(cache);
                    }

                    @Override
                    public void stateChanged(CuratorFramework client, ConnectionState newState) {}
                });
                cache.start();
                caches.add(cache);
                sayCache(cache);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown discovery command " + f[0]);
        }
    }

    // benchTrial prepares the discovery workloads (bench/internal/driver/discovery.go),
    // a ServiceDiscovery on each of the two sessions, for the service "svc" under PATH:
    //   discovery-register PATH N I      the second registers I instances, then the first's
    //                                    ServiceProvider starts (heap: the used heap it took, per
    //                                    instance), then the second registers N more one at a time;
    //                                    lat is each until the provider has it (then unregistered,
    //                                    until it is gone); changer is the second session's id
    //   discovery-load PATH N            N instances registered, then a ServiceProvider starts;
    //                                    heap is the used heap after System.gc() per instance
    //   discovery-pick PATH N MILLIS     4 threads call getInstance on a provider of N
    //                                    instances for MILLIS
    static java.util.concurrent.Callable<String> benchTrial(String[] f, CuratorFramework[] cs,
            List<AutoCloseable> closing) throws Exception {
        String path = f[1];
        int n = Integer.parseInt(f[2]);
        ServiceDiscovery<Object> reader = ServiceDiscoveryBuilder.builder(Object.class).client(cs[0]).basePath(path).build();
        ServiceDiscovery<Object> writer = ServiceDiscoveryBuilder.builder(Object.class).client(cs[1]).basePath(path).build();
        closing.add(writer);
        closing.add(reader);
        reader.start();
        writer.start();
        int instances = f[0].equals("discovery-register") ? Integer.parseInt(f[3]) : n;
        for (int i = 0; i < instances; i++) {
            writer.registerService(benchInstance("i" + i));
        }
        if (f[0].equals("discovery-load")) {
            return () -> {
                long before = CuratorPeer.Bench.usedHeap();
                long start = System.nanoTime();
                ServiceProvider<Object> provider = reader.serviceProviderBuilder().serviceName("svc").build();
                provider.start();
                long nanos = System.nanoTime() - start;
                int size = provider.getAllInstances().size();
                if (size != n) {
                    throw new java.io.IOException("the provider knows " + size + " instances, not " + n);
                }
                long heap1 = CuratorPeer.Bench.usedHeap();
                provider.close();
                long heap0 = Math.min(before, CuratorPeer.Bench.usedHeap());
                String r = CuratorPeer.Bench.json(n, n, 0, 0, nanos, null);
                return CuratorPeer.Bench.with(r, "heap", (double) (heap1 - heap0) / n);
            };
        }
        long before = CuratorPeer.Bench.usedHeap();
        ServiceProvider<Object> provider = reader.serviceProviderBuilder().serviceName("svc").build();
        provider.start(); // closed by the reader's close
        CuratorPeer.Bench.pollUntil(() -> count(provider) == instances);
        double heap = instances > 0 ? (double) (CuratorPeer.Bench.usedHeap() - before) / instances : 0;
        if (f[0].equals("discovery-pick")) {
            long millis = Long.parseLong(f[3]);
            return () -> {
                java.util.concurrent.atomic.AtomicLong picks = new java.util.concurrent.atomic.AtomicLong();
                long start = System.nanoTime(), end = start + millis * 1_000_000L;
                List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    Thread th = new Thread(() -> {
                        try {
                            for (int k = 0; ; k++) {
                                if (k % 256 == 0 && System.nanoTime() > end) {
                                    return;
                                }
                                if (provider.getInstance() == null) {
                                    throw new IllegalStateException("no instance");
                                }
                                picks.incrementAndGet();
                            }
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
                    th.start();
                    threads.add(th);
                }
                for (Thread th : threads) {
                    th.join();
                }
                long ops = picks.get();
                return CuratorPeer.Bench.json(ops, ops, 0, 0, System.nanoTime() - start, null);
            };
        }
        return () -> {
            long[] lat = new long[n];
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                String id = "r" + i;
                ServiceInstance<Object> in = benchInstance(id);
                long t0 = System.nanoTime();
                writer.registerService(in);
                CuratorPeer.Bench.pollUntil(() -> knows(provider, id));
                lat[i] = System.nanoTime() - t0;
                writer.unregisterService(in);
                CuratorPeer.Bench.pollUntil(() -> !knows(provider, id));
            }
            String r = CuratorPeer.Bench.json(n, n, 0, 0, System.nanoTime() - start, lat);
            // The registrar's session, so that the driver can tell its requests from the
            // provider's.
            r = CuratorPeer.Bench.with(r, "changer", cs[1].getZookeeperClient().getZooKeeper().getSessionId());
            return heap > 0 ? CuratorPeer.Bench.with(r, "heap", heap) : r;
        };
    }

    private static ServiceInstance<Object> benchInstance(String id) throws Exception {
        return ServiceInstance.builder().name("svc").id(id).address("10.0.0.1").port(8080)
                .uriSpec(new UriSpec("{scheme}://{address}:{port}")).build();
    }

    private static int count(ServiceProvider<Object> provider) {
        try {
            return provider.getAllInstances().size();
        } catch (Exception e) {
            return -1;
        }
    }

    private static boolean knows(ServiceProvider<Object> provider, String id) {
        try {
            return provider.getAllInstances().stream().anyMatch(in -> in.getId().equals(id));
        } catch (Exception e) {
            return false;
        }
    }

    private static Map<String, Object> fields(ServiceInstance<Object> in) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", in.getName());
        m.put("id", in.getId());
        m.put("address", in.getAddress());
        m.put("port", in.getPort());
        m.put("sslPort", in.getSslPort());
        m.put("payload", in.getPayload());
        m.put("payloadClass", in.getPayload() == null ? null : in.getPayload().getClass().getName());
        m.put("registrationTimeUTC", in.getRegistrationTimeUTC());
        m.put("serviceType", in.getServiceType());
        m.put("enabled", in.isEnabled());
        m.put("uri", in.buildUriSpec());
        return m;
    }

    private static void sayCache(ServiceCache<Object> cache) {
        List<Map<String, Object>> all = new ArrayList<>();
        for (ServiceInstance<Object> in : cache.getInstances()) {
            all.add(fields(in));
        }
        all.sort(Comparator.comparing(m -> (String) m.get("id")));
        try {
            CuratorPeer.say("CACHE " + mapper.writeValueAsString(all));
        } catch (Exception e) {
            CuratorPeer.say("ERROR " + e);
        }
    }
}
