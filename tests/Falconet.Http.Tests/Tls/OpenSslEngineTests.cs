using System;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Runtime.Versioning;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport.Tls;
using Falconet.Transport.Tls.OpenSsl;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// What the OpenSSL engine adds to the HTTPS suites run on it (<c>HttpsTestsOnOpenSsl…</c>): hostile bytes after the
/// handshake, a KeyUpdate from <c>openssl s_client</c>, ALPN with curl, and options it cannot honour failing the start. Every
/// server checks on disposal that all pool blocks came back.
/// </summary>
public class OpenSslEngineTests : ServerTests
{
    protected override bool Https => true;

    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    private static ValueTask DescribeTls(HttpContext context)
    {
        TlsConnectionInfo tls = context.GetTlsConnectionInfo() ?? throw new InvalidOperationException("not over TLS");
        context.Response.Write(Encoding.ASCII.GetBytes($"{tls.Protocol} {tls.ApplicationProtocol} {tls.CipherSuite}"));
        return default;
    }

    [Fact]
    public void A_selector_that_loads_its_certificate_anew_for_every_handshake_gets_one_context_per_certificate()
    {
        using X509Certificate2 alpha = TestCertificates.CreateServer("alpha.test");
        using X509Certificate2 beta = TestCertificates.CreateServer("beta.test");
        byte[] alphaPfx = alpha.Export(X509ContentType.Pkcs12);
        byte[] betaPfx = beta.Export(X509ContentType.Pkcs12);
        int loads = 0;
        var options = new TlsServerOptions
        {
            Engine = TlsEngine.OpenSsl,

            // A new instance on every call, as a selector reading a certificate store or a file would return.
            ServerCertificateSelector = name =>
            {
                loads++;
                return X509CertificateLoader.LoadPkcs12(name == "alpha.test" ? alphaPfx : betaPfx, null);
            },
        };
        var context = new OpenSslServerContext(options, options.ApplicationProtocols);
        for (int i = 0; i < 6; i++)
        {
            using SafeSslHandle session = context.NewSession();
            context.Select(session.DangerousGetHandle(), i % 2 == 0 ? "alpha.test" : "beta.test").ShouldBeTrue();
        }

        loads.ShouldBe(6);
        context.SelectedContexts.ShouldBe(2);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(SslProtocols.Tls12)]
    [InlineData(SslProtocols.Tls13)]
    public async Task Garbage_after_the_handshake_ends_the_connection_with_every_block_returned(SslProtocols protocol)
    {
        await using TestServer host = await StartServerAsync(DescribeTls);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(host.EndPoint);
        await using var tls = new SslStream(new NetworkStream(socket, ownsSocket: false));
        SslClientAuthenticationOptions options = TestCertificates.ClientOptions();
        options.EnabledSslProtocols = protocol;
        await tls.AuthenticateAsClientAsync(options).WaitAsync(TestTimeouts.Operation);
        await tls.WriteAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"u8.ToArray());
        byte[] buffer = new byte[4096];
        (await tls.ReadAsync(buffer).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBeGreaterThan(0);

        // An application-data record whose bytes are noise: its authentication fails.
        byte[] garbage = BodyHashing.RandomBytes(300, seed: 7);
        garbage[0] = 23;
        garbage[1] = 3;
        garbage[2] = 3;
        garbage[3] = 0;
        garbage[4] = 200;
        await socket.SendAsync(garbage, SocketFlags.None);

        (await ReadUntilClosedAsync(socket)).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_record_cut_short_by_the_FIN_after_the_handshake_ends_the_connection_cleanly()
    {
        await using TestServer host = await StartServerAsync(DescribeTls);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(host.EndPoint);
        await using var tls = new SslStream(new NetworkStream(socket, ownsSocket: false));
        await tls.AuthenticateAsClientAsync(TestCertificates.ClientOptions()).WaitAsync(TestTimeouts.Operation);

        // A header announcing 16 KiB, 100 bytes of it, then the FIN.
        byte[] cut = new byte[105];
        cut[0] = 23;
        cut[1] = 3;
        cut[2] = 3;
        cut[3] = 0x40;
        await socket.SendAsync(cut, SocketFlags.None);
        socket.Shutdown(SocketShutdown.Send);

        (await ReadUntilClosedAsync(socket)).ShouldBeTrue();
        host.Server.RequestCount.ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_KeyUpdate_from_openssl_s_client_keeps_the_connection_serving()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(Encoding.ASCII.GetBytes($"served {context.Request.Path}\n"));
            return default;
        });
        var start = new ProcessStartInfo("openssl")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (string argument in new[] { "s_client", "-connect", host.EndPoint.ToString(), "-tls1_3", "-alpn", "http/1.1", "-crlf" })
        {
            start.ArgumentList.Add(argument);
        }

        using Process client = Process.Start(start)!;
        var output = new StringBuilder();
        // Responses on standard output, "KEYUPDATE" on standard error: both into one record, in arrival order.
        DataReceivedEventHandler record = (_, line) =>
        {
            lock (output)
            {
                output.AppendLine(line.Data);
            }
        };
        client.OutputDataReceived += record;
        client.ErrorDataReceived += record;
        client.BeginOutputReadLine();
        client.BeginErrorReadLine();
        try
        {
            await client.StandardInput.WriteAsync("GET /before HTTP/1.1\nHost: localhost\n\n");
            await client.StandardInput.FlushAsync();
            await WaitForOutputAsync(output, "served /before");

            // 'k': a KeyUpdate that asks the server to update its own keys too (its answer is written during a read).
            await client.StandardInput.WriteAsync("k\n");
            await client.StandardInput.FlushAsync();
            await WaitForOutputAsync(output, "KEYUPDATE");
            await client.StandardInput.WriteAsync("GET /after HTTP/1.1\nHost: localhost\n\n");
            await client.StandardInput.FlushAsync();
            await WaitForOutputAsync(output, "served /after");
        }
        finally
        {
            client.StandardInput.Close();
            await client.WaitForExitAsync().WaitAsync(TestTimeouts.Operation);
        }

        host.Server.RequestCount.ShouldBe(2);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("--http2", "Tls13 h2 TLS_")]
    [InlineData("--http1.1", "Tls13 http/1.1 TLS_")]
    public async Task Curl_gets_the_protocol_it_asks_for_by_ALPN(string version, string expected)
    {
        await using TestServer host = await StartServerAsync(DescribeTls);
        string folder = Directory.CreateTempSubdirectory("falconet-openssl-alpn-").FullName;
        try
        {
            string certificate = Path.Combine(folder, "cert.pem");
            TestCertificates.WritePem(TestCertificates.Server, certificate, Path.Combine(folder, "key.pem"));
            int port = host.EndPoint.Port;

            (int exitCode, string output) = await ToolProcess.RunAsync("curl", null, "--silent", "--show-error", version, "--cacert", certificate,
                "--resolve", $"localhost:{port}:127.0.0.1", $"https://localhost:{port}/");

            exitCode.ShouldBe(0, output);
            // The cipher suite by its IANA name: OpenSSL's choice, read back as .NET names it.
            output.ShouldStartWith(expected);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
#pragma warning disable CS0618, SYSLIB0039 // Old versions named to show the range OpenSSL needs.
    [InlineData(SslProtocols.Tls | SslProtocols.Tls13, "EnabledProtocols")]
    [InlineData(SslProtocols.Tls11 | SslProtocols.Tls13, "EnabledProtocols")]
#pragma warning restore CS0618, SYSLIB0039
    public async Task Protocol_versions_OpenSSL_cannot_express_fail_the_start_naming_the_option(SslProtocols protocols, string option)
    {
        var options = new FalconetServerOptions { Transport = Transport };
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0),
            new TlsServerOptions { ServerCertificate = TestCertificates.Server, EnabledProtocols = protocols, Engine = TlsEngine.OpenSsl }));
        await using var server = new FalconetServer(options, DescribeTls);

        string message = (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message;
        message.ShouldContain(option);
        message.ShouldContain("OpenSSL");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    [SupportedOSPlatform("linux")] // The engine runs on Linux only, and so does ECDsaOpenSsl.
    public async Task A_certificate_whose_private_key_cannot_be_exported_fails_the_start_naming_the_endpoint_and_the_certificate()
    {
        // What a key kept in a hardware module or an OpenSSL provider looks like to the engine: the certificate says it has
        // a private key, and exporting it fails (this one holds only the public half, so .NET cannot export it either).
        using X509Certificate2 source = TestCertificates.CreateServer("no-export.test");
        using X509Certificate2 publicOnly = X509CertificateLoader.LoadCertificate(source.RawData);
        using ECDsa exported = source.GetECDsaPrivateKey()!;
        using var publicHalf = new ECDsaOpenSsl();
        publicHalf.ImportParameters(exported.ExportParameters(includePrivateParameters: false));
        using X509Certificate2 certificate = publicOnly.CopyWithPrivateKey(publicHalf);
        certificate.HasPrivateKey.ShouldBeTrue();

        var options = new FalconetServerOptions { Transport = Transport };
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0),
            new TlsServerOptions { ServerCertificate = certificate, Engine = TlsEngine.OpenSsl }));
        await using var server = new FalconetServer(options, DescribeTls);

        string message = (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message;
        message.ShouldContain("https://127.0.0.1:0");
        message.ShouldContain("CN=no-export.test");
        message.ShouldContain(certificate.Thumbprint);
        message.ShouldContain("cannot be exported");
        message.ShouldContain("TlsEngine.SslStream");
        server.BoundHttpsEndpoints.ShouldBeEmpty();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_PFX_loaded_without_the_exportable_flag_into_an_ephemeral_key_set_serves_on_the_engine()
    {
        // On Linux .NET can export every key it loads itself, whatever X509KeyStorageFlags say: such a certificate works.
        byte[] pfx = TestCertificates.Server.Export(X509ContentType.Pkcs12, "secret");
        using X509Certificate2 certificate = X509CertificateLoader.LoadPkcs12(pfx, "secret", X509KeyStorageFlags.EphemeralKeySet);
        await using TestServer host = await StartServerAsync(DescribeTls, options => options.HttpsEndpoints[0].Tls.ServerCertificate = certificate);
        using RawClient client = host.Connect();

        await client.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldStartWith("Tls13 http/1.1");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_unknown_engine_fails_the_start_naming_the_option()
    {
        var options = new FalconetServerOptions { Transport = Transport };
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0),
            new TlsServerOptions { ServerCertificate = TestCertificates.Server, Engine = (TlsEngine)7 }));
        await using var server = new FalconetServer(options, DescribeTls);

        (await Should.ThrowAsync<ArgumentOutOfRangeException>(() => server.StartAsync())).Message.ShouldContain("Engine");
    }

    /// <summary>Reads (and drops) what the server still sends, an alert say, until it closes: true on its FIN or reset.</summary>
    private static async Task<bool> ReadUntilClosedAsync(Socket socket)
    {
        byte[] buffer = new byte[4096];
        for (int i = 0; i < 100; i++)
        {
            try
            {
                if (await socket.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(TestTimeouts.Operation) == 0)
                {
                    return true;
                }
            }
            catch (SocketException)
            {
                return true;
            }
        }

        return false;
    }

    private static async Task WaitForOutputAsync(StringBuilder output, string expected)
    {
        for (int i = 0; i < 1000; i++)
        {
            lock (output)
            {
                if (output.ToString().Contains(expected, StringComparison.Ordinal))
                {
                    return;
                }
            }

            await Task.Delay(10);
        }

        lock (output)
        {
            throw new ShouldAssertException($"openssl s_client never printed '{expected}'. It printed:{Environment.NewLine}{output}");
        }
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class OpenSslEngineTestsOnLibuv : OpenSslEngineTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}
