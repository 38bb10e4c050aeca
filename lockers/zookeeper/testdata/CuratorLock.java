// CuratorLock takes an Apache Curator InterProcessMutex on a path, for the
// interoperability test of lockers/zookeeper. It connects to the servers
// named by its first argument, makes a mutex on the path of its second,
// and then reads commands on stdin, one a line, answering each on stdout:
//
//   try      -> "acquired" or "busy" (one attempt, no wait)
//   acquire  -> "acquired" once it holds the lock (it waits in line)
//   release  -> "released"
//   quit     -> exits
//
// It prints "ready" once connected, and "error <message>" when a command
// fails.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLock {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 5000, new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            System.out.println("error not connected");
            System.exit(1);
        }
        InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            try {
                switch (line.trim()) {
                case "try":
                    System.out.println(mutex.acquire(0, TimeUnit.MILLISECONDS) ? "acquired" : "busy");
                    break;
                case "acquire":
                    mutex.acquire();
                    System.out.println("acquired");
                    break;
                case "release":
                    mutex.release();
                    System.out.println("released");
                    break;
                case "quit":
                    client.close();
                    return;
                default:
                    System.out.println("error unknown command " + line);
                }
            } catch (Exception e) {
                System.out.println("error " + e);
            }
            System.out.flush();
        }
        client.close();
    }
}
