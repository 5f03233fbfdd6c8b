using System;
using System.IO;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Samples;

/// <summary>
/// The sample over HTTP/2 with real clients, on both transports: curl with prior knowledge (h2c) and over TLS (h2 chosen
/// with ALPN), nghttp (nghttp2-client), and openssl s_client negotiating h2. Needs curl, openssl and nghttp (.ci/run
/// installs them).
/// </summary>
public sealed partial class PlaintextSampleProcessTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("sockets")]
    [InlineData("libuv")]
    public async Task Sample_serves_HTTP_2_to_curl_nghttp_and_openssl_over_h2c_and_h2(string transport)
    {
        string folder = Directory.CreateTempSubdirectory("falconet-h2-").FullName;
        try
        {
            string certificate = Path.Combine(folder, "cert.pem");
            string key = Path.Combine(folder, "key.pem");
            (await ToolProcess.RunAsync("openssl", null, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")).ExitCode.ShouldBe(0);

            using SampleProcess sample = SampleProcess.Start(descriptorLimit: null, "--port", "0", "--https-port", "0", "--https-cert", certificate, "--https-key", key, "--transport", transport);
            Uri plain = await sample.WaitUntilListeningAsync();
            using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
            string? httpsLine = await sample.Process.StandardOutput.ReadLineAsync(timeout.Token);
            string httpsPort = HttpsPortOf().Match(httpsLine ?? string.Empty).Groups["port"].Value;
            httpsPort.ShouldNotBeEmpty($"unexpected second line: {httpsLine}");

            // The same plain port serves HTTP/1.1 and a client that opens with the HTTP/2 preface. One URL per curl: curl 7.88
            // fails its second transfer on a reused prior-knowledge connection before it sends it (nginx's h2c too).
            foreach ((string path, string body) in new[] { ("/plaintext", "Hello, World!"), ("/json", "{\"message\":\"Hello, World!\"}") })
            {
                (int h2cExit, string h2c) = await ToolProcess.RunAsync("curl", null, "--silent", "--show-error", "--http2-prior-knowledge",
                    "--write-out", "\n%{http_code} %{http_version}", new Uri(plain, path).ToString());
                h2cExit.ShouldBe(0, h2c);
                h2c.ShouldContain(body + "\n200 2");
            }

            (int http1Exit, string http1) = await ToolProcess.RunAsync("curl", null, "--silent", "--show-error", "--write-out", "\n%{http_code} %{http_version}",
                new Uri(plain, "/plaintext").ToString());
            http1Exit.ShouldBe(0, http1);
            http1.ShouldContain("Hello, World!\n200 1.1");

            // ALPN chooses h2 over TLS when the client offers it.
            (int h2Exit, string h2) = await ToolProcess.RunAsync("curl", null, "--silent", "--show-error", "--http2", "--cacert", certificate,
                "--write-out", "\n%{http_code} %{http_version}", $"https://localhost:{httpsPort}/plaintext");
            h2Exit.ShouldBe(0, h2);
            h2.ShouldContain("Hello, World!\n200 2");

            (int nghttpExit, string nghttp) = await ToolProcess.RunAsync("nghttp", null, "--null-out", "--stat", "-v", new Uri(plain, "/json").ToString());
            nghttpExit.ShouldBe(0, nghttp);
            nghttp.ShouldContain("recv SETTINGS frame");
            nghttp.ShouldContain(":status: 200");
            (int nghttpTlsExit, string nghttpTls) = await ToolProcess.RunAsync("nghttp", null, "--null-out", "-v", $"https://localhost:{httpsPort}/plaintext");
            nghttpTlsExit.ShouldBe(0, nghttpTls);
            nghttpTls.ShouldContain("The negotiated protocol: h2");
            nghttpTls.ShouldContain(":status: 200");

            (int opensslExit, string openssl) = await ToolProcess.RunAsync("openssl", string.Empty,
                "s_client", "-connect", $"127.0.0.1:{httpsPort}", "-servername", "localhost", "-alpn", "h2", "-CAfile", certificate);
            opensslExit.ShouldBe(0, openssl);
            openssl.ShouldContain("ALPN protocol: h2");

            (int exitCode, _, string errors) = await sample.InterruptAsync();
            exitCode.ShouldBe(0, errors);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [GeneratedRegex(@"^Falconet listening on https://127\.0\.0\.1:(?<port>\d+) ")]
    private static partial Regex HttpsPortOf();
}
