import java.io.FileInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Reads one file through Hadoop's ABFS with the Hadoop settings in a properties file (the
 * adapter's generated conf), then tries a write: prints one line per step, "ok ..." or
 * "failed <exception class>: <first line>". Used by the abfss tests against Azurite.
 */
public class AbfsRead {
  public static void main(String[] args) throws Exception {
    Properties settings = new Properties();
    try (FileInputStream in = new FileInputStream(args[0])) {
      settings.load(in);
    }
    Configuration conf = new Configuration();
    for (String key : settings.stringPropertyNames()) {
      conf.set(key, settings.getProperty(key));
    }
    Path file = new Path(args[1]);
    try {
      FileSystem fs = FileSystem.get(new URI(args[1]), conf);
      System.out.println("ok status length=" + fs.getFileStatus(file).getLen());
      try (FSDataInputStream in = fs.open(file)) {
        System.out.println("ok read " + new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
      try (FSDataOutputStream out = fs.create(new Path(file.getParent(), "abfs-write"))) {
        out.write(1);
        System.out.println("ok write");
      }
    } catch (Exception e) {
      String text = String.valueOf(e.getMessage()).split("\n")[0];
      System.out.println("failed " + e.getClass().getSimpleName() + ": " + text);
    }
  }
}
