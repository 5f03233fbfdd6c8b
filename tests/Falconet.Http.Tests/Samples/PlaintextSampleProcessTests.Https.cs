using System;
using System.Diagnostics;
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
    [InlineData("sockets")]
    [InlineData("libuv")]
    public async Task Sample_serves_HTTPS_to_curl_and_openssl_with_a_certificate_made_by_openssl(string transport)
    {
        string folder = Directory.CreateTempSubdirectory("falconet-https-").FullName;
        try
        {
            string certificate = Path.Combine(folder, "cert.pem");
            string key = Path.Combine(folder, "key.pem");

            // The command docs/http-server.md gives for a development certificate.
            (await RunAsync("openssl", null, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")).ExitCode.ShouldBe(0);

            using (SampleProcess sample = SampleProcess.Start(descriptorLimit: null, "--port", "0", "--https-port", "0", "--https-cert", certificate, "--https-key", key, "--transport", transport))
            {
                await sample.WaitUntilListeningAsync();
                using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
                string? httpsLine = await sample.Process.StandardOutput.ReadLineAsync(timeout.Token);
                Match listening = HttpsListeningLine().Match(httpsLine ?? string.Empty);
                listening.Success.ShouldBeTrue($"unexpected second line: {httpsLine}");
                string port = listening.Groups["port"].Value;

                // curl checks the chain against the certificate file and the name against its subjectAltName.
                (int curlExit, string curlOutput) = await RunAsync("curl", null, "--silent", "--show-error", "--http1.1", "--cacert", certificate,
                    "--write-out", "\n%{http_code} %{http_version}", $"https://localhost:{port}/plaintext", $"https://localhost:{port}/json");
                curlExit.ShouldBe(0, curlOutput);
                curlOutput.ShouldContain("Hello, World!\n200 1.1");
                curlOutput.ShouldContain("{\"message\":\"Hello, World!\"}\n200 1.1");

                (int opensslExit, string opensslOutput) = await RunAsync("openssl", "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
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

    /// <summary>Runs a command line tool to its end; returns its exit code and everything it printed.</summary>
    private static async Task<(int ExitCode, string Output)> RunAsync(string tool, string? input, params string[] arguments)
    {
        var start = new ProcessStartInfo(tool)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"{tool} did not start.");
        if (input is not null)
        {
            await process.StandardInput.WriteAsync(input);
        }

        process.StandardInput.Close();
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        Task<string> output = process.StandardOutput.ReadToEndAsync(timeout.Token);
        Task<string> errors = process.StandardError.ReadToEndAsync(timeout.Token);
        await process.WaitForExitAsync(timeout.Token);
        return (process.ExitCode, await output + await errors);
    }

    [GeneratedRegex(@"^Falconet listening on https://127\.0\.0\.1:(?<port>\d+) ")]
    private static partial Regex HttpsListeningLine();
}
