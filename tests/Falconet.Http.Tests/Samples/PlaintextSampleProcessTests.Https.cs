using System;
using System.IO;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Samples;

/// <summary>
/// The sample over HTTPS with real clients: a development certificate made with openssl, then curl --cacert and
/// openssl s_client against the running process, on both transports. Needs curl and openssl (.ci/run installs them).
/// </summary>
public sealed partial class PlaintextSampleProcessTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("sockets", "sslstream", null, "SslStream")]
    [InlineData("libuv", "sslstream", null, "SslStream")]
    [InlineData("libuv", "openssl", null, "OpenSsl")]
    [InlineData("libuv", "auto", null, "OpenSsl")]
    [InlineData("libuv", "auto", "0", "SslStream")]
    [InlineData("sockets", "openssl", "0", "OpenSsl")]
    public async Task Sample_serves_HTTPS_to_curl_and_openssl_with_a_certificate_made_by_openssl(string transport, string tlsEngine,
        string? openSslSwitch, string runs)
    {
        string folder = Directory.CreateTempSubdirectory("falconet-https-").FullName;
        try
        {
            string certificate = Path.Combine(folder, "cert.pem");
            string key = Path.Combine(folder, "key.pem");

            // The command docs/http-server.md gives for a development certificate.
            (await ToolProcess.RunAsync("openssl", null, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")).ExitCode.ShouldBe(0);

            // FALCONET_TLS_OPENSSL=0, the operator's switch, turns the OpenSSL engine off for auto only.
            // Empty (not 0) where the case sets no switch, whatever this process's environment holds.
            var environment = new System.Collections.Generic.Dictionary<string, string> { ["FALCONET_TLS_OPENSSL"] = openSslSwitch ?? string.Empty };

            using (SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, startupHook: null, environment, normalScheduling: false,
                "--port", "0", "--https-port", "0", "--https-cert", certificate, "--https-key", key, "--transport", transport, "--tls-engine", tlsEngine))
            {
                await sample.WaitUntilListeningAsync();
                using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
                string? httpsLine = await sample.Process.StandardOutput.ReadLineAsync(timeout.Token);
                Match listening = HttpsListeningLine().Match(httpsLine ?? string.Empty);
                listening.Success.ShouldBeTrue($"unexpected second line: {httpsLine}");
                httpsLine.ShouldEndWith($" with the {runs} TLS engine");
                string port = listening.Groups["port"].Value;

                // curl checks the chain against the certificate file and the name against its subjectAltName.
                (int curlExit, string curlOutput) = await ToolProcess.RunAsync("curl", null, "--silent", "--show-error", "--http1.1", "--cacert", certificate,
                    "--write-out", "\n%{http_code} %{http_version}", $"https://localhost:{port}/plaintext", $"https://localhost:{port}/json");
                curlExit.ShouldBe(0, curlOutput);
                curlOutput.ShouldContain("Hello, World!\n200 1.1");
                curlOutput.ShouldContain("{\"message\":\"Hello, World!\"}\n200 1.1");

                (int opensslExit, string opensslOutput) = await ToolProcess.RunAsync("openssl", "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                    "s_client", "-connect", $"127.0.0.1:{port}", "-servername", "localhost", "-alpn", "http/1.1", "-CAfile", certificate, "-ign_eof");
                opensslExit.ShouldBe(0, opensslOutput);
                opensslOutput.ShouldContain("Verify return code: 0 (ok)");
                opensslOutput.ShouldContain("ALPN protocol: http/1.1");
                opensslOutput.ShouldContain("HTTP/1.1 200 OK");
                opensslOutput.ShouldContain("Hello, World!");

                (int exitCode, _, string errors) = await sample.InterruptAsync();
                exitCode.ShouldBe(0, errors);
            }
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [GeneratedRegex(@"^Falconet listening on https://127\.0\.0\.1:(?<port>\d+) ")]
    private static partial Regex HttpsListeningLine();
}
