using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport.Tls;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// HTTPS endpoints with real TLS clients: negotiation (versions, ALPN, SNI, client certificates), bodies byte-exact,
/// and every handshake fault closing cleanly, logged at debug and counted by reason, with every block back.
/// </summary>
public class HttpsTests : ServerTests
{
    protected override bool Https => true;

    /// <summary>Answers what the TLS layer negotiated, as "protocol alpn host client-subject".</summary>
    private static ValueTask DescribeTls(HttpContext context)
    {
        TlsConnectionInfo tls = context.GetTlsConnectionInfo() ?? throw new InvalidOperationException("not over TLS");
        context.Response.Write(Encoding.ASCII.GetBytes(
            $"{tls.Protocol} {tls.ApplicationProtocol} {tls.HostName ?? "-"} {tls.ClientCertificate?.Subject ?? "-"}"));
        return default;
    }

    private static async Task<string> GetAsync(RawClient client, string path = "/")
    {
        await client.SendAsync($"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        return response.BodyText;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_default_client_gets_TLS_1_3_with_http_1_1_by_ALPN()
    {
        await using TestServer host = await StartServerAsync(DescribeTls);
        using RawClient client = host.Connect();

        client.Tls!.SslProtocol.ShouldBe(SslProtocols.Tls13);
        client.Tls.NegotiatedApplicationProtocol.ShouldBe(SslApplicationProtocol.Http11);
        (await GetAsync(client)).ShouldBe("Tls13 http/1.1 localhost -");
        (await GetAsync(client)).ShouldBe("Tls13 http/1.1 localhost -");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connections_run_on_the_engine_the_endpoint_names()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(Encoding.ASCII.GetBytes(((TlsConnection)context.Transport).Engine.ToString()));
            return default;
        });
        using RawClient client = host.Connect();

        (await GetAsync(client)).ShouldBe(TlsEngine.ToString());
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_TLS_1_2_client_is_served_and_a_plain_connection_sees_no_TLS()
    {
        await using TestServer host = await StartServerAsync(
            context =>
            {
                context.Response.Write(context.GetTlsConnectionInfo() is null ? "plain"u8 : "tls"u8);
                return default;
            },
            options => options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0)));
        SslClientAuthenticationOptions tls12 = TestCertificates.ClientOptions();
        tls12.EnabledSslProtocols = SslProtocols.Tls12;
        using RawClient client = RawClient.ConnectTls(host.Server.BoundHttpsEndpoints[0], options: tls12);

        client.Tls!.SslProtocol.ShouldBe(SslProtocols.Tls12);
        (await GetAsync(client)).ShouldBe("tls");
        using RawClient plain = RawClient.Connect(host.Server.BoundEndpoints[0]);
        (await GetAsync(plain)).ShouldBe("plain");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_below_the_enabled_protocols_is_refused_and_counted_as_a_protocol_failure()
    {
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(DescribeTls, options =>
        {
            options.LoggerFactory = logs;
            options.HttpsEndpoints[0].Tls.EnabledProtocols = SslProtocols.Tls13;
        });
        SslClientAuthenticationOptions tls12 = TestCertificates.ClientOptions();
        tls12.EnabledSslProtocols = SslProtocols.Tls12;

        Should.Throw<Exception>(() => RawClient.ConnectTls(host.EndPoint, options: tls12).Dispose());
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "protocol");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_SNI_selector_picks_each_host_its_own_certificate_and_refuses_unknown_names_with_an_alert()
    {
        X509Certificate2 alpha = TestCertificates.CreateServer("alpha.test");
        X509Certificate2 beta = TestCertificates.CreateServer("beta.test");
        var logs = new RecordingLoggerFactory();
        using var metrics = new TlsMetricsListener();
        await using TestServer host = await StartServerAsync(DescribeTls, options =>
        {
            options.LoggerFactory = logs;
            options.HttpsEndpoints[0] = new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), new TlsServerOptions
            {
                ServerCertificateSelector = name => name switch
                {
                    "alpha.test" => alpha,
                    "beta.test" => beta,
                    _ => null,
                },
            });
        });

        // Each client trusts only the certificate of its own host, so a wrong pick fails its handshake.
        using (RawClient client = RawClient.ConnectTls(host.EndPoint, options: TestCertificates.ClientOptions("alpha.test", alpha)))
        {
            (await GetAsync(client)).ShouldBe("Tls13 http/1.1 alpha.test -");
        }

        using (RawClient client = RawClient.ConnectTls(host.EndPoint, options: TestCertificates.ClientOptions("beta.test", beta)))
        {
            (await GetAsync(client)).ShouldBe("Tls13 http/1.1 beta.test -");
        }

        AuthenticationException refused = Should.Throw<AuthenticationException>(
            () => RawClient.ConnectTls(host.EndPoint, options: TestCertificates.ClientOptions("gamma.test", alpha)).Dispose());
        refused.ToString().ShouldContain("unrecognized name", Case.Insensitive);
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "unknown_server_name");
        metrics.Failures("unknown_server_name").ShouldBeGreaterThanOrEqualTo(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_required_client_certificate_reaches_the_application_and_its_absence_fails_the_handshake()
    {
        X509Certificate2 clientCertificate = TestCertificates.CreateClient("falconet-client");
        var logs = new RecordingLoggerFactory();
        using var metrics = new TlsMetricsListener();
        await using TestServer host = await StartServerAsync(DescribeTls, options =>
        {
            options.LoggerFactory = logs;
            TlsServerOptions tls = options.HttpsEndpoints[0].Tls;
            tls.ClientCertificateMode = ClientCertificateMode.RequireCertificate;
            tls.ClientCertificateValidation = (certificate, _, _) => certificate.Thumbprint == clientCertificate.Thumbprint;
        });

        SslClientAuthenticationOptions withCertificate = TestCertificates.ClientOptions();
        withCertificate.ClientCertificates = new X509CertificateCollection { clientCertificate };
        using (RawClient client = RawClient.ConnectTls(host.EndPoint, options: withCertificate))
        {
            (await GetAsync(client)).ShouldBe("Tls13 http/1.1 localhost CN=falconet-client");
        }

        // With TLS 1.3 the client may finish its side first; then its first read fails on the server's alert.
        await Should.ThrowAsync<Exception>(async () =>
        {
            using RawClient client = RawClient.ConnectTls(host.EndPoint);
            await GetAsync(client);
        });
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "client_certificate");
        metrics.Failures("client_certificate").ShouldBeGreaterThanOrEqualTo(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_allowed_client_certificate_may_be_left_out()
    {
        await using TestServer host = await StartServerAsync(DescribeTls,
            options => options.HttpsEndpoints[0].Tls.ClientCertificateMode = ClientCertificateMode.AllowCertificate);
        using RawClient client = host.Connect();

        (await GetAsync(client)).ShouldBe("Tls13 http/1.1 localhost -");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Plain_HTTP_sent_to_the_HTTPS_port_is_closed_cleanly_logged_and_counted()
    {
        var logs = new RecordingLoggerFactory();
        using var metrics = new TlsMetricsListener();
        await using TestServer host = await StartServerAsync(DescribeTls, options => options.LoggerFactory = logs);
        using RawClient client = RawClient.Connect(host.EndPoint);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");

        // A FIN (0 bytes) and nothing else: no reset, no bytes an HTTP client could mistake for a response.
        (await client.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "not_tls");
        metrics.Failures("not_tls").ShouldBeGreaterThanOrEqualTo(1);
        host.Server.RequestCount.ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handshake_cut_short_by_the_client_is_closed_and_counted_as_truncated()
    {
        byte[] hello = await TlsProbe.CaptureClientHelloAsync();
        var logs = new RecordingLoggerFactory();
        using var metrics = new TlsMetricsListener();
        await using TestServer host = await StartServerAsync(DescribeTls, options => options.LoggerFactory = logs);
        using RawClient client = RawClient.Connect(host.EndPoint);
        await client.SendAsync(hello.AsMemory(0, hello.Length / 2));
        client.Socket.Shutdown(SocketShutdown.Send);

        (await client.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "truncated");
        metrics.Failures("truncated").ShouldBeGreaterThanOrEqualTo(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_stalls_mid_handshake_is_closed_once_the_handshake_timeout_passes()
    {
        byte[] hello = await TlsProbe.CaptureClientHelloAsync();
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        using var metrics = new TlsMetricsListener();
        await using TestServer host = await StartServerAsync(DescribeTls, options =>
        {
            options.LoggerFactory = logs;
            options.TimeProvider = clock;
            options.HeartbeatInterval = TimeSpan.FromSeconds(1);
        });
        using RawClient client = RawClient.Connect(host.EndPoint);

        // The whole ClientHello, then silence: the server answered and now waits for the client's Finished.
        await client.SendAsync(hello);
        Task<int> end = client.ReceiveEndAsync();
        for (int second = 1; second <= 9; second++)
        {
            clock.Advance(TimeSpan.FromSeconds(1));
            await Task.Delay(20);
        }

        // The server's first flight is what the client reads; only the close must not have come yet.
        await Task.Delay(50);
        (await end.WaitAsync(TestTimeouts.Operation)).ShouldBeGreaterThan(0);
        Task<int> close = client.ReceiveEndAsync();
        await Task.Delay(50);
        close.IsCompleted.ShouldBeFalse();

        for (int i = 0; i < 200 && !close.IsCompleted; i++)
        {
            clock.Advance(TimeSpan.FromSeconds(1));
            await Task.WhenAny(close, Task.Delay(20));
        }

        (await close.WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(TimeSpan.FromSeconds(10));
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "timeout");
        metrics.Failures("timeout").ShouldBeGreaterThanOrEqualTo(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stopping_the_server_ends_a_handshake_in_progress_with_a_clean_close()
    {
        var logs = new RecordingLoggerFactory();
        TestServer host = await StartServerAsync(DescribeTls, options => options.LoggerFactory = logs);
        try
        {
            using RawClient client = RawClient.Connect(host.EndPoint);
            await client.SendAsync(new byte[] { 22, 3, 1 });
            Task<int> end = client.ReceiveEndAsync();
            await Task.Delay(50);

            await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);
            (await end.WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
            await TlsProbe.WaitForFailedHandshakeAsync(logs, "server_stopping");
        }
        finally
        {
            await host.DisposeAsync();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Closing_the_connection_sends_close_notify_before_the_FIN()
    {
        await using TestServer host = await StartServerAsync(DescribeTls);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(host.EndPoint);
        var recording = new RecordingStream(new NetworkStream(socket, ownsSocket: false));

        // TLS 1.2 leaves the record type in clear: close_notify is an alert record (21), not application data.
        SslClientAuthenticationOptions tls12 = TestCertificates.ClientOptions();
        tls12.EnabledSslProtocols = SslProtocols.Tls12;
        await using var tls = new SslStream(recording);
        await tls.AuthenticateAsClientAsync(tls12);
        await tls.WriteAsync("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"u8.ToArray());
        using var received = new MemoryStream();
        await tls.CopyToAsync(received).WaitAsync(TestTimeouts.Operation);

        Encoding.ASCII.GetString(received.ToArray()).ShouldEndWith("Tls12 http/1.1 localhost -");
        recording.LastRecordType.ShouldBe((byte)21);
        (await socket.ReceiveAsync(new byte[16], SocketFlags.None)).ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_requests_with_bodies_are_answered_in_order_with_every_byte_intact()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);
        using RawClient client = host.Connect();
        int[] sizes = [0, 1, 4095, 4096, 4097, 16_384, 16_385, 70_000, 3];
        byte[][] bodies = sizes.Select((size, i) => BodyHashing.RandomBytes(size, seed: i)).ToArray();

        using var batch = new MemoryStream();
        foreach (byte[] body in bodies)
        {
            batch.Write(Encoding.ASCII.GetBytes($"POST /hash HTTP/1.1\r\nHost: localhost\r\nContent-Length: {body.Length}\r\n\r\n"));
            batch.Write(body);
        }

        await client.SendAsync(batch.ToArray());
        foreach (byte[] body in bodies)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Multi_MiB_uploads_arrive_byte_exact_one_after_another_on_one_connection()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);
        using RawClient client = host.Connect();

        // Full 16 KiB records back to back: each spans several 4 KiB blocks, and the socket delivers them as they come.
        foreach (int size in (int[])[4 * 1024 * 1024 + 17, 3 * 1024 * 1024])
        {
            byte[] body = BodyHashing.RandomBytes(size, seed: size);
            await client.SendAsync($"POST /hash HTTP/1.1\r\nHost: localhost\r\nContent-Length: {size}\r\n\r\n");
            await client.SendAsync(body);
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"{size} {BodyHashing.Sha256Hex(body)}");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_upload_whose_records_arrive_split_at_changing_places_arrives_byte_exact()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);

        // Pieces that cut records inside their 5-byte header, just after it, mid-body and across two records.
        using RawClient client = RawClient.ConnectTls(host.EndPoint, sendPieces: [3, 1_500, 2, 9_001, 4_096, 21_000, 700]);
        const int Size = 1024 * 1024 + 13;
        byte[] body = BodyHashing.RandomBytes(Size, seed: 11);
        await client.SendAsync($"POST /hash HTTP/1.1\r\nHost: localhost\r\nContent-Length: {Size}\r\n\r\n");
        await client.SendAsync(body);
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"{Size} {BodyHashing.Sha256Hex(body)}");
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(256)]
    [InlineData(4096)]
    [InlineData(65_536)]
    [InlineData(1_048_576)]
    public async Task Response_bodies_of_the_benchmark_sizes_arrive_byte_exact(int size)
    {
        byte[] payload = BodyHashing.RandomBytes(size, seed: size);
        await using TestServer host = await StartServerAsync(context => context.Response.WriteAsync(payload));
        using RawClient client = host.Connect();

        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            BodyHashing.Sha256Hex(response.Body).ShouldBe(BodyHashing.Sha256Hex(payload));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_endpoint_without_a_certificate_or_with_one_lacking_its_key_fails_to_start()
    {
        var options = new FalconetServerOptions();
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), new TlsServerOptions()));
        await using (var server = new FalconetServer(options, DescribeTls))
        {
            (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message.ShouldContain("ServerCertificate");
        }

        using X509Certificate2 publicOnly = X509CertificateLoader.LoadCertificate(TestCertificates.Server.RawData);
        options.HttpsEndpoints[0] = new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), publicOnly);
        await using (var server = new FalconetServer(options, DescribeTls))
        {
            (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message.ShouldContain("private key");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_endpoint_that_offers_no_application_protocol_negotiates_none_and_serves_HTTP_1_1()
    {
        await using TestServer host = await StartServerAsync(DescribeTls, options => options.HttpsEndpoints[0].Tls.ApplicationProtocols.Clear());
        using RawClient client = host.Connect();

        client.Tls!.NegotiatedApplicationProtocol.ShouldBe(default);
        (await GetAsync(client)).ShouldBe("Tls13  localhost -");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_offers_no_ALPN_is_served_HTTP_1_1_by_an_endpoint_that_offers_it()
    {
        await using TestServer host = await StartServerAsync(DescribeTls);
        SslClientAuthenticationOptions noAlpn = TestCertificates.ClientOptions();
        noAlpn.ApplicationProtocols = null;
        using RawClient client = RawClient.ConnectTls(host.EndPoint, options: noAlpn);

        client.Tls!.NegotiatedApplicationProtocol.ShouldBe(default);
        (await GetAsync(client)).ShouldBe("Tls13  localhost -");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_offers_only_protocols_the_endpoint_does_not_fails_its_handshake()
    {
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(DescribeTls, options =>
        {
            options.LoggerFactory = logs;
            options.Protocols = HttpProtocols.Http1;
        });
        SslClientAuthenticationOptions h2Only = TestCertificates.ClientOptions();
        h2Only.ApplicationProtocols = [SslApplicationProtocol.Http2];

        // The endpoint serves HTTP/1.1 only, so ALPN does not offer h2.
        Should.Throw<AuthenticationException>(() => RawClient.ConnectTls(host.EndPoint, options: h2Only).Dispose());
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "protocol");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Offering_a_protocol_the_server_does_not_serve_or_one_twice_fails_the_start_naming_the_option()
    {
        var options = new FalconetServerOptions();
        var tls = new TlsServerOptions { ServerCertificate = TestCertificates.Server, ApplicationProtocols = [new SslApplicationProtocol("h3")] };
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), tls));
        await using (var server = new FalconetServer(options, DescribeTls))
        {
            string message = (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message;
            message.ShouldContain("HttpsEndpoints[0].Tls.ApplicationProtocols");
            message.ShouldContain("'h3'");
        }

        tls.ApplicationProtocols = [SslApplicationProtocol.Http11, SslApplicationProtocol.Http11];
        await using (var server = new FalconetServer(options, DescribeTls))
        {
            (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message.ShouldContain("ApplicationProtocols lists 'http/1.1' twice");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Certificates_load_from_PEM_files_and_from_a_password_protected_PFX()
    {
        string folder = Directory.CreateTempSubdirectory("falconet-certificates-").FullName;
        try
        {
            string certificate = Path.Combine(folder, "cert.pem");
            string key = Path.Combine(folder, "key.pem");
            string pfx = Path.Combine(folder, "site.pfx");
            TestCertificates.WritePem(TestCertificates.Server, certificate, key);
            await File.WriteAllBytesAsync(pfx, TestCertificates.Server.Export(X509ContentType.Pkcs12, "secret"));

            foreach (TlsServerOptions tls in new[] { TlsServerOptions.FromPemFiles(certificate, key), TlsServerOptions.FromPfxFile(pfx, "secret") })
            {
                await using TestServer host = await StartServerAsync(DescribeTls,
                    options => options.HttpsEndpoints[0] = new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), tls));
                using RawClient client = host.Connect();
                (await GetAsync(client)).ShouldBe("Tls13 http/1.1 localhost -");
            }
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Completed_handshakes_are_measured_by_protocol_version()
    {
        using var metrics = new TlsMetricsListener();
        await using TestServer host = await StartServerAsync(DescribeTls);
        using RawClient client = host.Connect();
        await GetAsync(client);

        metrics.Durations.ShouldContain(duration => duration.Version == "1.3" && duration.Seconds > 0);
    }

    /// <summary>Records the content type of the last TLS record read from the server.</summary>
    private sealed class RecordingStream(Stream inner) : Stream
    {
        private readonly MemoryStream _all = new();

        public byte LastRecordType
        {
            get
            {
                byte[] bytes = _all.ToArray();
                byte last = 0;
                for (int at = 0; at + 5 <= bytes.Length; at += 5 + ((bytes[at + 3] << 8) | bytes[at + 4]))
                {
                    last = bytes[at];
                }

                return last;
            }
        }

        public override bool CanRead => true;

        public override bool CanWrite => true;

        public override bool CanSeek => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, System.Threading.CancellationToken cancellationToken = default)
        {
            int read = await inner.ReadAsync(buffer, cancellationToken);
            _all.Write(buffer.Span[..read]);
            return read;
        }

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, System.Threading.CancellationToken cancellationToken = default) =>
            inner.WriteAsync(buffer, cancellationToken);

        public override System.Threading.Tasks.Task FlushAsync(System.Threading.CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override void Flush() => inner.Flush();

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => inner.Write(buffer, offset, count);

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class HttpsTestsOnLibuv : HttpsTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class HttpsTestsOnIoUring : HttpsTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
