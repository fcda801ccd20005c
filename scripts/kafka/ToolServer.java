import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Kafka's one-shot command-line tools (kafka-topics, kafka-consumer-groups, ...) run in one
 * resident JVM, for scripts/kafka-local's {@code tool}: a tool's own JVM spent about a second of
 * CPU starting, several hundred times a test run, to do a few milliseconds of admin work.
 *
 * <p>A call is a connection to the Unix socket: the tool's main class and its arguments,
 * NUL-separated, then end of input; the answer is the exit code, the lengths of stdout and
 * stderr (three big-endian ints), then both.  Each call runs the tool's real {@code main} in a
 * thread of its own: its System.out and System.err (and those of the threads it starts) are
 * its own buffers, and the exit it asks for ({@code Exit.exit}, {@code System.exit}) ends only
 * its thread.  As in a JVM of its own, the first exit is the call's code and nothing the tool
 * writes after it is kept (a tool that catches every Throwable would otherwise print the
 * exit's unwinding as an error).  The server ends with the broker whose pid it was given.
 *
 * <p>Usage: {@code java -Djava.security.manager=allow -cp KAFKA_CLASSPATH ToolServer.java
 * SOCKET BROKER_PID}
 */
public final class ToolServer {

    /** The running call; null in the server's own threads. */
    private static final InheritableThreadLocal<Call> CALL = new InheritableThreadLocal<>();

    /** A call's stdout and stderr, and the exit it asked for first (null: none yet). */
    private static final class Call {
        private final ByteArrayOutputStream[] streams = {
            new ByteArrayOutputStream(), new ByteArrayOutputStream()
        };
        private volatile Integer exit;
    }

    /** A call's exit: thrown where the tool exits, to unwind its thread. */
    private static final class Exited extends Error {
        Exited(int code) {
            super("exit " + code, null, false, false);
        }
    }

    /** System.out or System.err: the running call's buffer, else the server's own stream. */
    private static final class Routed extends OutputStream {
        private final PrintStream own;
        private final int which;

        Routed(PrintStream own, int which) {
            this.own = own;
            this.which = which;
        }

        private OutputStream target() {
            Call call = CALL.get();
            if (call == null) {
                return own;
            }
            return call.exit == null ? call.streams[which] : OutputStream.nullOutputStream();
        }

        @Override
        public void write(int b) throws IOException {
            target().write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            target().write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            target().flush();
        }
    }

    /** Turns a call's exit into {@link Exited}; any other check passes. */
    @SuppressWarnings("removal")
    private static final class TrapExit extends SecurityManager {
        @Override
        public void checkPermission(java.security.Permission perm) {
        }

        @Override
        public void checkPermission(java.security.Permission perm, Object context) {
        }

        @Override
        public void checkExit(int status) {
            Call call = CALL.get();
            if (call != null) {
                synchronized (call) {
                    if (call.exit == null) {
                        call.exit = status;
                    }
                }
                throw new Exited(status);
            }
        }
    }

    @SuppressWarnings("removal")
    public static void main(String[] args) throws IOException {
        Path socket = Path.of(args[0]);
        long broker = Long.parseLong(args[1]);
        System.setOut(new PrintStream(new Routed(System.out, 0), true));
        System.setErr(new PrintStream(new Routed(System.err, 1), true));
        System.setSecurityManager(new TrapExit());
        Files.deleteIfExists(socket);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        Thread watch = new Thread(() -> endWith(broker, socket), "broker-watch");
        watch.setDaemon(true);
        watch.start();
        while (true) {
            SocketChannel conn = server.accept();
            new Thread(() -> serve(conn), "tool-call").start();
        }
    }

    /** Ends the server once the broker has: a broker killed, not stopped, leaves none behind. */
    private static void endWith(long broker, Path socket) {
        while (ProcessHandle.of(broker).map(ProcessHandle::isAlive).orElse(false)) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                break;
            }
        }
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            // the server ends all the same
        }
        Runtime.getRuntime().halt(0);
    }

    private static void serve(SocketChannel conn) {
        try (conn) {
            InputStream in = Channels.newInputStream(conn);
            String[] request = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\0", -1);
            Call call = new Call();
            CALL.set(call);
            int code;
            try {
                code = run(request[0], Arrays.copyOfRange(request, 1, request.length));
                System.out.flush();
                System.err.flush();
            } finally {
                CALL.remove();
            }
            code = call.exit != null ? call.exit : code;
            byte[] out = call.streams[0].toByteArray();
            byte[] err = call.streams[1].toByteArray();
            ByteBuffer head = ByteBuffer.allocate(12).putInt(code).putInt(out.length).putInt(err.length);
            OutputStream reply = Channels.newOutputStream(conn);
            reply.write(head.array());
            reply.write(out);
            reply.write(err);
            reply.flush();
        } catch (IOException e) {
            // the caller went away: nothing to answer
        }
    }

    /** The tool's main, run as its own JVM would: 0 when it returns, 1 for an uncaught
     *  exception (an exit it asked for is the call's, by {@link Call#exit}). */
    private static int run(String mainClass, String[] args) {
        try {
            Class.forName(mainClass).getMethod("main", String[].class).invoke(null, (Object) args);
            return 0;
        } catch (InvocationTargetException e) {
            if (CALL.get().exit == null) {  // else the exit unwound it: the call's code
                System.err.print("Exception in thread \"main\" ");
                e.getCause().printStackTrace();
            }
            return 1;
        } catch (ReflectiveOperationException e) {
            e.printStackTrace();
            return 1;
        }
    }
}
