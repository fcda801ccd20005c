import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Waits until a broker really serves: a metadata request (describeCluster) succeeds.
 * Usage: KafkaReady HOST:PORT TIMEOUT_SECONDS. Exit 0 when ready, 1 on timeout.
 */
public class KafkaReady {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[1]));
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        try (Admin admin = Admin.create(props)) {
            while (System.nanoTime() < deadline) {
                try {
                    int nodes = admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).size();
                    admin.listTopics().names().get(3, TimeUnit.SECONDS);
                    if (nodes > 0) {
                        return;
                    }
                } catch (Exception notYet) {
                    Thread.sleep(250);
                }
            }
        }
        System.err.println("KafkaReady: no answer from " + bootstrap);
        System.exit(1);
    }
}
