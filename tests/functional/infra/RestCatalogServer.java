// An Iceberg REST catalog for the tests: the spec's routes on the JDK's HTTP server, each one
// served by Iceberg's own CatalogHandlers (the semantics Iceberg's REST clients are tested
// against: staged creates, commits checked against their requirements, views) over a
// JdbcCatalog on H2, with table files written through HadoopFileIO and s3a (or, with
// GCS_ROOT_URL set, Hadoop's GCS connector on an emulator).
//
// Configuration comes from the environment so no secret shows in a process listing:
//   REST_CATALOG_TOKEN   the only bearer token accepted (required)
//   REST_CATALOG_WAREHOUSE  e.g. s3://bucket/prefix (required)
//   REST_CATALOG_JDBC_URI   default: an in-memory H2 database that lives as long as the server
//   S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION   the S3 store
//   GCS_ROOT_URL, GCS_PROJECT   a GCS emulator instead (the GCS connector on the classpath)
// Argument: the port to bind on 127.0.0.1 (0 or none: a free one). When ready it prints
// `rest-catalog listening on 127.0.0.1:<port>`, then one access-log line per request.

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.UnprocessableEntityException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.JsonAutoDetect;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.PropertyAccessor;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.PropertyNamingStrategies;

public final class RestCatalogServer {
  private static final ObjectMapper JSON = restMapper();
  // The REST spec's default separator of a namespace's levels in a path or query, URL-encoded
  // (Iceberg 1.12's RESTUtil takes it as an argument; its client sends it unless configured).
  private static final String NAMESPACE_SEPARATOR = "%1F";
  // What this server implements; a client calls nothing else (no multi-table transactions).
  private static final List<Endpoint> ENDPOINTS =
      List.of(
          Endpoint.V1_LIST_NAMESPACES,
          Endpoint.V1_LOAD_NAMESPACE,
          Endpoint.V1_NAMESPACE_EXISTS,
          Endpoint.V1_CREATE_NAMESPACE,
          Endpoint.V1_UPDATE_NAMESPACE,
          Endpoint.V1_DELETE_NAMESPACE,
          Endpoint.V1_LIST_TABLES,
          Endpoint.V1_LOAD_TABLE,
          Endpoint.V1_TABLE_EXISTS,
          Endpoint.V1_CREATE_TABLE,
          Endpoint.V1_UPDATE_TABLE,
          Endpoint.V1_DELETE_TABLE,
          Endpoint.V1_RENAME_TABLE,
          Endpoint.V1_REGISTER_TABLE,
          Endpoint.V1_REPORT_METRICS,
          Endpoint.V1_LIST_VIEWS,
          Endpoint.V1_LOAD_VIEW,
          Endpoint.V1_VIEW_EXISTS,
          Endpoint.V1_CREATE_VIEW,
          Endpoint.V1_UPDATE_VIEW,
          Endpoint.V1_DELETE_VIEW,
          Endpoint.V1_RENAME_VIEW);

  // Configured as Iceberg's (package-private) RESTObjectMapper: kebab-case field names, the
  // REST serializers, request beans read through their fields, unknown fields tolerated.
  private static ObjectMapper restMapper() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    mapper.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    mapper.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
    RESTSerializers.registerAll(mapper);
    return mapper;
  }

  private final JdbcCatalog catalog;
  private final byte[] expectedAuth;
  private final PrintStream log;

  /** A response: status and an optional JSON body. */
  private record Reply(int status, Object body) {
    static Reply ok(Object body) {
      return new Reply(200, body);
    }

    static Reply empty() {
      return new Reply(204, null);
    }
  }

  /** Thrown for requests that match no route: the spec's 400/404/405 answers. */
  private static final class RouteException extends RuntimeException {
    final int status;
    final String type;

    RouteException(int status, String type, String message) {
      super(message);
      this.status = status;
      this.type = type;
    }
  }

  private RestCatalogServer(JdbcCatalog catalog, String token, PrintStream log) {
    this.catalog = catalog;
    this.expectedAuth = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    this.log = log;
  }

  public static void main(String[] args) throws Exception {
    String token = required("REST_CATALOG_TOKEN");
    String warehouse = required("REST_CATALOG_WAREHOUSE");
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    String jdbcUri =
        env("REST_CATALOG_JDBC_URI", "jdbc:h2:mem:rest_catalog;DB_CLOSE_DELAY=-1;DATABASE_TO_LOWER=TRUE");

    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, jdbcUri);
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    props.put(CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.hadoop.HadoopFileIO");
    props.put(CatalogProperties.CLIENT_POOL_SIZE, "8");
    // V1 adds the record type column that views need.
    props.put("jdbc.schema-version", "V1");
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(hadoopConf());
    catalog.initialize("rest_backend", props);

    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
    RestCatalogServer server = new RestCatalogServer(catalog, token, System.out);
    http.createContext("/", server::handle);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    http.setExecutor(pool);
    http.start();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  http.stop(0);
                  pool.shutdownNow();
                }));
    System.out.println("rest-catalog listening on 127.0.0.1:" + http.getAddress().getPort());
    System.out.flush();
  }

  private static Configuration hadoopConf() {
    Configuration conf = new Configuration();
    String gcsRootUrl = System.getenv("GCS_ROOT_URL");
    if (gcsRootUrl != null && !gcsRootUrl.isEmpty()) {
      // A warehouse on a GCS emulator (fake-gcs-server), as the adapter configures Hadoop's GCS
      // connector for one: no authentication, copy-and-delete instead of the JSON API's moveTo.
      conf.set("fs.gs.impl", "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem");
      conf.set("fs.gs.storage.root.url", gcsRootUrl);
      conf.set("fs.gs.project.id", env("GCS_PROJECT", "test"));
      conf.set("fs.gs.auth.service.account.enable", "false");
      conf.set("fs.gs.auth.null.enable", "true");
      conf.set("fs.gs.operation.move.enable", "false");
      return conf;
    }
    conf.set("fs.s3.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem");
    conf.set("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
    conf.set("fs.s3a.access.key", required("AWS_ACCESS_KEY_ID"));
    conf.set("fs.s3a.secret.key", required("AWS_SECRET_ACCESS_KEY"));
    conf.set("fs.s3a.endpoint.region", env("AWS_REGION", "us-east-1"));
    // As the adapter does: no bulk DELETE of parent markers after each write.
    conf.set("fs.s3a.directory.marker.retention", "keep");
    String endpoint = System.getenv("S3_ENDPOINT");
    if (endpoint != null && !endpoint.isEmpty()) {
      conf.set("fs.s3a.endpoint", endpoint);
      conf.set("fs.s3a.path.style.access", "true");
      conf.set("fs.s3a.connection.ssl.enabled", String.valueOf(endpoint.startsWith("https:")));
    }
    return conf;
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  private static String required(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      System.err.println("RestCatalogServer: environment variable " + name + " is required");
      System.exit(2);
    }
    return value;
  }

  private void handle(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    String path = exchange.getRequestURI().getRawPath();
    Reply reply;
    try {
      byte[] body = readAll(exchange.getRequestBody());
      if (!authorized(exchange)) {
        reply = error(401, "NotAuthorizedException", "Not authorized: missing or wrong bearer token");
      } else {
        reply = route(method, path, query(exchange.getRequestURI().getRawQuery()), body);
      }
    } catch (RouteException e) {
      reply = error(e.status, e.type, e.getMessage());
    } catch (RuntimeException e) {
      reply = error(statusOf(e), e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
    }
    log.println(method + " " + path + " " + reply.status());
    log.flush();
    send(exchange, reply);
  }

  private boolean authorized(HttpExchange exchange) {
    String header = exchange.getRequestHeaders().getFirst("Authorization");
    return header != null
        && MessageDigest.isEqual(header.getBytes(StandardCharsets.UTF_8), expectedAuth);
  }

  private Reply route(String method, String rawPath, Map<String, String> query, byte[] body)
      throws IOException {
    List<String> parts = new ArrayList<>();
    for (String segment : rawPath.split("/")) {
      if (!segment.isEmpty()) {
        parts.add(segment);
      }
    }
    if (parts.size() < 2 || !parts.get(0).equals("v1")) {
      throw new RouteException(404, "NoSuchRouteException", "No route for " + method + " " + rawPath);
    }
    List<String> p = parts.subList(1, parts.size());
    int n = p.size();
    String first = p.get(0);

    if (n == 1 && first.equals("config") && method.equals("GET")) {
      return Reply.ok(ConfigResponse.builder().withEndpoints(ENDPOINTS).build());
    }
    if (n == 2 && first.equals("tables") && p.get(1).equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameTable(catalog, read(body, RenameTableRequest.class));
      return Reply.empty();
    }
    if (n == 2 && first.equals("views") && p.get(1).equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameView(catalog, read(body, RenameTableRequest.class));
      return Reply.empty();
    }
    if (!first.equals("namespaces")) {
      throw new RouteException(404, "NoSuchRouteException", "No route for " + method + " " + rawPath);
    }
    if (n == 1) {
      switch (method) {
        case "GET":
          Namespace parent =
              query.containsKey("parent")
                  ? RESTUtil.decodeNamespace(query.get("parent"), NAMESPACE_SEPARATOR)
                  : Namespace.empty();
          if (query.containsKey("pageSize")) {
            return Reply.ok(
                CatalogHandlers.listNamespaces(
                    catalog, parent, decoded(query, "pageToken"), decoded(query, "pageSize")));
          }
          return Reply.ok(CatalogHandlers.listNamespaces(catalog, parent));
        case "POST":
          return Reply.ok(
              CatalogHandlers.createNamespace(catalog, read(body, CreateNamespaceRequest.class)));
        default:
          throw notAllowed(method, rawPath);
      }
    }
    Namespace ns = RESTUtil.decodeNamespace(p.get(1), NAMESPACE_SEPARATOR);
    if (n == 2) {
      switch (method) {
        case "GET":
          return Reply.ok(CatalogHandlers.loadNamespace(catalog, ns));
        case "HEAD":
          CatalogHandlers.namespaceExists(catalog, ns);
          return Reply.empty();
        case "DELETE":
          CatalogHandlers.dropNamespace(catalog, ns);
          return Reply.empty();
        default:
          throw notAllowed(method, rawPath);
      }
    }
    String kind = p.get(2);
    if (n == 3 && kind.equals("properties") && method.equals("POST")) {
      return Reply.ok(
          CatalogHandlers.updateNamespaceProperties(
              catalog, ns, read(body, UpdateNamespacePropertiesRequest.class)));
    }
    if (n == 3 && kind.equals("register") && method.equals("POST")) {
      return Reply.ok(CatalogHandlers.registerTable(catalog, ns, read(body, RegisterTableRequest.class)));
    }
    if (n == 3 && kind.equals("tables")) {
      switch (method) {
        case "GET":
          if (query.containsKey("pageSize")) {
            return Reply.ok(
                CatalogHandlers.listTables(catalog, ns, decoded(query, "pageToken"), decoded(query, "pageSize")));
          }
          return Reply.ok(CatalogHandlers.listTables(catalog, ns));
        case "POST":
          CreateTableRequest create = read(body, CreateTableRequest.class);
          return Reply.ok(
              create.stageCreate()
                  ? CatalogHandlers.stageTableCreate(catalog, ns, create)
                  : CatalogHandlers.createTable(catalog, ns, create));
        default:
          throw notAllowed(method, rawPath);
      }
    }
    if (n == 3 && kind.equals("views")) {
      switch (method) {
        case "GET":
          if (query.containsKey("pageSize")) {
            return Reply.ok(
                CatalogHandlers.listViews(catalog, ns, decoded(query, "pageToken"), decoded(query, "pageSize")));
          }
          return Reply.ok(CatalogHandlers.listViews(catalog, ns));
        case "POST":
          return Reply.ok(CatalogHandlers.createView(catalog, ns, read(body, CreateViewRequest.class)));
        default:
          throw notAllowed(method, rawPath);
      }
    }
    if (n < 4 || !(kind.equals("tables") || kind.equals("views"))) {
      throw new RouteException(404, "NoSuchRouteException", "No route for " + method + " " + rawPath);
    }
    TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(p.get(3)));
    if (kind.equals("tables") && n == 5 && p.get(4).equals("metrics") && method.equals("POST")) {
      return Reply.empty(); // scan/commit metrics reports: accepted and not kept
    }
    if (n != 4) {
      throw new RouteException(404, "NoSuchRouteException", "No route for " + method + " " + rawPath);
    }
    if (kind.equals("tables")) {
      switch (method) {
        case "GET":
          return Reply.ok(CatalogHandlers.loadTable(catalog, ident, snapshotMode(query)));
        case "HEAD":
          CatalogHandlers.tableExists(catalog, ident);
          return Reply.empty();
        case "POST":
          return Reply.ok(CatalogHandlers.updateTable(catalog, ident, read(body, UpdateTableRequest.class)));
        case "DELETE":
          if ("true".equalsIgnoreCase(query.get("purgeRequested"))) {
            CatalogHandlers.purgeTable(catalog, ident);
          } else {
            CatalogHandlers.dropTable(catalog, ident);
          }
          return Reply.empty();
        default:
          throw notAllowed(method, rawPath);
      }
    }
    switch (method) {
      case "GET":
        return Reply.ok(CatalogHandlers.loadView(catalog, ident));
      case "HEAD":
        CatalogHandlers.viewExists(catalog, ident);
        return Reply.empty();
      case "POST":
        return Reply.ok(CatalogHandlers.updateView(catalog, ident, read(body, UpdateTableRequest.class)));
      case "DELETE":
        CatalogHandlers.dropView(catalog, ident);
        return Reply.empty();
      default:
        throw notAllowed(method, rawPath);
    }
  }

  private static RouteException notAllowed(String method, String path) {
    return new RouteException(405, "MethodNotAllowedException", method + " is not allowed on " + path);
  }

  // The status codes of the Iceberg REST spec, as Iceberg's own clients map them back.
  private static int statusOf(RuntimeException e) {
    if (e instanceof NoSuchNamespaceException
        || e instanceof NoSuchTableException
        || e instanceof NoSuchViewException) {
      return 404;
    }
    if (e instanceof AlreadyExistsException
        || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      return 409;
    }
    if (e instanceof NotAuthorizedException) {
      return 401;
    }
    if (e instanceof ForbiddenException) {
      return 403;
    }
    if (e instanceof UnsupportedOperationException) {
      return 406;
    }
    if (e instanceof UnprocessableEntityException) {
      return 422;
    }
    if (e instanceof IllegalArgumentException || e instanceof ValidationException) {
      return 400;
    }
    if (e instanceof CommitStateUnknownException) {
      return 500;
    }
    return 500;
  }

  private static Reply error(int status, String type, String message) {
    return new Reply(
        status,
        ErrorResponse.builder().responseCode(status).withType(type).withMessage(message).build());
  }

  private <T> T read(byte[] body, Class<T> type) {
    try {
      return JSON.readValue(body, type);
    } catch (IOException | RuntimeException e) {
      throw new RouteException(
          400, "BadRequestException", "Malformed " + type.getSimpleName() + ": " + e.getMessage());
    }
  }

  private static void send(HttpExchange exchange, Reply reply) throws IOException {
    try (exchange) {
      if (reply.body() == null) {
        exchange.sendResponseHeaders(reply.status(), -1);
        return;
      }
      byte[] bytes = JSON.writeValueAsBytes(reply.body());
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      if (exchange.getRequestMethod().equals("HEAD")) {
        exchange.sendResponseHeaders(reply.status(), -1);
        return;
      }
      exchange.sendResponseHeaders(reply.status(), bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    try (in) {
      return in.readAllBytes();
    }
  }

  // `snapshots=refs` asks for the snapshots of the table's refs only; all of them by default.
  private static RESTCatalogProperties.SnapshotMode snapshotMode(Map<String, String> query) {
    String mode = decoded(query, "snapshots");
    return mode == null
        ? RESTCatalogProperties.SnapshotMode.ALL
        : RESTCatalogProperties.SnapshotMode.valueOf(mode.toUpperCase(java.util.Locale.ROOT));
  }

  private static String decoded(Map<String, String> query, String key) {
    String value = query.get(key);
    return value == null ? null : RESTUtil.decodeString(value);
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> params = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return params;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      // Values stay encoded: a namespace's levels are split on the encoded %1F separator.
      String key = RESTUtil.decodeString(eq < 0 ? pair : pair.substring(0, eq));
      params.put(key, eq < 0 ? "" : pair.substring(eq + 1));
    }
    return params;
  }
}
