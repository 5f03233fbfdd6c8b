using System;
using System.Net;
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

    public IPEndPoint EndPoint => Server.BoundEndpoints[0];

    public Uri BaseAddress => new($"http://{EndPoint}/");

    public static async Task<TestServer> StartAsync(Func<HttpContext, ValueTask> handler, Action<FalconetServerOptions>? configure = null, bool trackLeaks = true)
    {
        var options = new FalconetServerOptions
        {
            IoThreadCount = 2,
            TrackPoolLeaks = trackLeaks,
            ShutdownTimeout = TimeSpan.FromSeconds(5),
        };
        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0));
        configure?.Invoke(options);
        var server = new FalconetServer(options, handler);
        await server.StartAsync().WaitAsync(TestTimeouts.Operation);
        return new TestServer(server);
    }

    public RawClient Connect(int? receiveBufferSize = null) => RawClient.Connect(EndPoint, receiveBufferSize);

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
