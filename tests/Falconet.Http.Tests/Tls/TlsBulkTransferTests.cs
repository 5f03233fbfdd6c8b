using System;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// Large responses over TLS with real clients (HttpClient, curl): every byte intact whatever the bound on encrypted bytes in
/// flight, and a bound that cannot be honoured failing the start.
/// </summary>
public class TlsBulkTransferTests : ServerTests
{
    protected override bool Https => true;

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(1_048_576, TlsServerOptions.DefaultMaxBytesInFlight)]
    [InlineData(4_194_304 + 17, TlsServerOptions.DefaultMaxBytesInFlight)]
    [InlineData(4_194_304 + 17, TlsServerOptions.MinMaxBytesInFlight)]
    [InlineData(4_194_304 + 17, 4 * 1024 * 1024)]
    public async Task Large_responses_arrive_byte_exact_to_HttpClient_whatever_the_bound_on_bytes_in_flight(int size, int maxBytesInFlight)
    {
        byte[] payload = BodyHashing.RandomBytes(size, seed: size ^ maxBytesInFlight);
        await using TestServer host = await StartServerAsync(
            context => context.Response.WriteAsync(payload),
            options => options.HttpsEndpoints[0].Tls.MaxBytesInFlight = maxBytesInFlight);
        using HttpClient http = host.CreateHttpClient();

        // Twice on one connection: the second response starts after a batch that ended with records still being sent.
        for (int i = 0; i < 2; i++)
        {
            byte[] body = await http.GetByteArrayAsync("/");
            body.Length.ShouldBe(size);
            BodyHashing.Sha256Hex(body).ShouldBe(BodyHashing.Sha256Hex(payload));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_4_MiB_response_written_in_pieces_arrives_byte_exact_to_curl()
    {
        const int Size = 4 * 1024 * 1024;
        byte[] payload = BodyHashing.RandomBytes(Size, seed: 6);
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.ContentLength = Size;
            for (int offset = 0; offset < Size; offset += 100_000)
            {
                await context.Response.WriteAsync(payload.AsMemory(offset, Math.Min(100_000, Size - offset)));
            }
        });
        string folder = Directory.CreateTempSubdirectory("falconet-tls-bulk-").FullName;
        try
        {
            string certificate = Path.Combine(folder, "cert.pem");
            string output = Path.Combine(folder, "body");
            TestCertificates.WritePem(TestCertificates.Server, certificate, Path.Combine(folder, "key.pem"));
            int port = host.EndPoint.Port;

            (int exitCode, string errors) = await ToolProcess.RunAsync("curl", null, "--silent", "--show-error", "--http1.1", "--cacert", certificate,
                "--resolve", $"localhost:{port}:127.0.0.1", "--output", output, $"https://localhost:{port}/", $"https://localhost:{port}/");

            exitCode.ShouldBe(0, errors);
            byte[] body = await File.ReadAllBytesAsync(output);
            body.Length.ShouldBe(Size);
            BodyHashing.Sha256Hex(body).ShouldBe(BodyHashing.Sha256Hex(payload));
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(TlsServerOptions.MinMaxBytesInFlight - 1)]
    [InlineData(TlsServerOptions.MaxMaxBytesInFlight + 1)]
    [InlineData(0)]
    public async Task A_bound_on_bytes_in_flight_outside_its_range_fails_the_start_naming_the_option(int maxBytesInFlight)
    {
        var options = new FalconetServerOptions { Transport = Transport };
        options.Endpoints.Clear();
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0),
            new TlsServerOptions { ServerCertificate = TestCertificates.Server, MaxBytesInFlight = maxBytesInFlight }));
        await using var server = new FalconetServer(options, _ => default);

        Exception failure = await Should.ThrowAsync<ArgumentOutOfRangeException>(() => server.StartAsync());
        failure.Message.ShouldContain("MaxBytesInFlight");
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class TlsBulkTransferTestsOnLibuv : TlsBulkTransferTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class TlsBulkTransferTestsOnIoUring : TlsBulkTransferTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary>The same tests on the OpenSSL engine, on the libuv transport.</summary>
public sealed class TlsBulkTransferTestsOnOpenSslOnLibuv : TlsBulkTransferTests
{
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}
