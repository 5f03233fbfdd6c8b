using System;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Server;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>A server on 127.0.0.1 port 0 for one test; disposing it stops the server, checks every pool block came back, and disposes a transport the test supplied.</summary>
internal sealed class TestServer : IAsyncDisposable
{
    private TestServer(FalconetServer server)
    {
        Server = server;
    }

    public FalconetServer Server { get; }

    /// <summary>True when the server listens on HTTPS only (the suites that run over TLS).</summary>
    public bool IsHttps => Server.BoundEndpoints.Count == 0 && Server.BoundHttpsEndpoints.Count > 0;

    public IPEndPoint EndPoint => IsHttps ? Server.BoundHttpsEndpoints[0] : Server.BoundEndpoints[0];

    public Uri BaseAddress => new($"{(IsHttps ? "https" : "http")}://{EndPoint}/");

    public static Task<TestServer> StartAsync(Func<HttpContext, ValueTask> handler, Action<FalconetServerOptions>? configure = null, bool trackLeaks = true)
        => StartAsync(options => new FalconetServer(options, handler), configure, trackLeaks);

    /// <summary>Starts the server <paramref name="create"/> makes (a <see cref="FalconetServer{THeaderSet}"/>, say) with the test options.</summary>
    public static async Task<TestServer> StartAsync(Func<FalconetServerOptions, FalconetServer> create, Action<FalconetServerOptions>? configure = null, bool trackLeaks = true)
    {
        var options = new FalconetServerOptions
        {
            IoThreadCount = 2,
            TrackPoolLeaks = trackLeaks,
            ShutdownTimeout = TimeSpan.FromSeconds(5),

            // Idle connections close at once when a test's server stops (the drain's grace has tests of its own).
            DrainIdleTimeout = TimeSpan.Zero,
        };
        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0));
        configure?.Invoke(options);
        FalconetServer server = create(options);
        await server.StartAsync().WaitAsync(TestTimeouts.Operation);
        return new TestServer(server);
    }

    /// <summary>An HttpClient for the server (trusting exactly the test certificate when it serves HTTPS).</summary>
    public HttpClient CreateHttpClient(SocketsHttpHandler? handler = null)
    {
        handler ??= new SocketsHttpHandler();
        handler.SslOptions = TestCertificates.ClientOptions();
        return new HttpClient(handler) { BaseAddress = BaseAddress, Timeout = TestTimeouts.Operation };
    }

    /// <summary>A raw client, speaking TLS when the server serves HTTPS.</summary>
    public RawClient Connect(int? receiveBufferSize = null, byte[]? preamble = null, bool trickle = false) =>
        IsHttps ? RawClient.ConnectTls(EndPoint, receiveBufferSize, preamble: preamble, trickle: trickle) : RawClient.Connect(EndPoint, receiveBufferSize, preamble, trickle);

    public async ValueTask DisposeAsync()
    {
        try
        {
            await Server.StopAsync().WaitAsync(TestTimeouts.Operation);
            await Server.WaitForAllBlocksReturnedAsync(TimeSpan.FromSeconds(5));
            await Server.DisposeAsync();
        }
        finally
        {
            // The server never disposes a transport it was given.
            if (Server.Options.TransportFactory is IAsyncDisposable transport)
            {
                await transport.DisposeAsync();
            }
        }
    }
}

/// <summary>Time limits every test works within.</summary>
internal static class TestTimeouts
{
    public static readonly TimeSpan Operation = TimeSpan.FromSeconds(20);

    public const int TestMilliseconds = 60_000;
}
