// A Spark Connect server for the tests that binds 127.0.0.1 only.
//
// Spark 3.5's own SparkConnectServer binds the wildcard address (3.5 has
// `spark.connect.grpc.binding.port` but no bind-address setting). On 3.5 this main does what
// SparkConnectService.start does (Spark 3.5.7), with the gRPC server built for 127.0.0.1:
// the same service, inbound message limit and interceptors, then the same listener (and UI tab
// when the UI is on). Spark 4 has `spark.connect.grpc.binding.address` (the caller sets it to
// 127.0.0.1), and its start also prepares the session manager's base session, which 3.5's
// steps leave out; so on 4.x this main calls Spark's own start (by reflection: the source
// compiles against both lines).
//
// Arguments: <properties file> <port>. The file's entries (UTF-8, java.util.Properties syntax)
// become Java system properties before the session is built, so SparkConf reads its `spark.*`
// ones; it is deleted once read, since it may hold secrets (they never reach the command line).
// Port 0 takes a free one. When serving it prints `CONNECT_SERVER_PORT=<port>` and runs until
// it is terminated.

import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connect.config.Connect$;
import org.apache.spark.sql.connect.service.SparkConnectInterceptorRegistry$;
import org.apache.spark.sql.connect.service.SparkConnectService;
import org.apache.spark.sql.connect.service.SparkConnectService$;
import org.sparkproject.connect.grpc.Server;
import org.sparkproject.connect.grpc.netty.NettyServerBuilder;

public final class ConnectServer {
  static final String HOST = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: ConnectServer <properties file> <port>");
      System.exit(2);
    }
    loadSystemProperties(Paths.get(args[0]));
    int port = Integer.parseInt(args[1]);

    SparkSession session = SparkSession.builder().getOrCreate();
    SparkContext context = session.sparkContext();
    SparkConnectService$ service = SparkConnectService$.MODULE$;
    Server server;
    try {
      if (context.version().startsWith("3.")) {
        server = startGrpc(context.getConf(), port);
        service.server_$eq(server);
        createListenerAndUi(service, context);
      } else {
        SparkConnectService$.class.getMethod("start", SparkContext.class).invoke(service, context);
        server = service.server();
      }
    } catch (Exception e) {
      e.printStackTrace();
      session.stop();
      System.exit(1);
      return;
    }
    InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().get(0);
    System.out.println("CONNECT_SERVER_PORT=" + bound.getPort());
    System.out.flush();
    try {
      server.awaitTermination();
    } finally {
      session.stop();
    }
  }

  static void loadSystemProperties(Path file) throws Exception {
    Properties properties = new Properties();
    try (InputStream in = Files.newInputStream(file);
        Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
      properties.load(reader);
    }
    Files.delete(file);
    for (String key : properties.stringPropertyNames()) {
      System.setProperty(key, properties.getProperty(key));
    }
  }

  static Server startGrpc(SparkConf conf, int port) throws Exception {
    long maxInbound = (Long) conf.get(Connect$.MODULE$.CONNECT_GRPC_MAX_INBOUND_MESSAGE_SIZE());
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new InetSocketAddress(HOST, port))
            .maxInboundMessageSize((int) maxInbound);
    // debug=false: no gRPC reflection service, which the stock server adds by default.
    builder.addService(new SparkConnectService(false));
    SparkConnectInterceptorRegistry$.MODULE$.chainInterceptors(builder);
    return builder.build().start();
  }

  // The listener feeds the Connect tab and the status store. `createListenerAndUI` is private
  // in Scala; the classpath is the unnamed module, so reflection may call it.
  static void createListenerAndUi(SparkConnectService$ service, SparkContext context)
      throws Exception {
    Method method =
        SparkConnectService$.class.getDeclaredMethod("createListenerAndUI", SparkContext.class);
    method.setAccessible(true);
    method.invoke(service, context);
  }
}
