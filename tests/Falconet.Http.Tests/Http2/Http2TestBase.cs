using System;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;

namespace Falconet.Http.Tests.Http2;

/// <summary>
/// Base of the HTTP/2 test classes: servers serve both protocols on their endpoint (h2c by prior knowledge, or h2 by ALPN
/// over TLS in the <c>…OverTls</c> classes), on the sockets transport and on libuv (<c>…OnLibuv</c>).
/// </summary>
public abstract class Http2TestBase : ServerTests
{
    /// <summary>Starts a server and opens a started raw HTTP/2 client on it.</summary>
    internal async Task<(TestServer Host, Http2Client Client)> StartWithClientAsync(Func<HttpContext, ValueTask> handler, Action<FalconetServerOptions>? configure = null)
    {
        TestServer host = await StartServerAsync(handler, configure);
        Http2Client client = Http2Client.Connect(host);
        await client.StartAsync();
        return (host, client);
    }

    /// <summary>An HttpClient that speaks HTTP/2 only: h2c by prior knowledge, or h2 over TLS (ALPN).</summary>
    internal static HttpClient CreateHttp2Client(TestServer host)
    {
        HttpClient client = host.CreateHttpClient(new SocketsHttpHandler { EnableMultipleHttp2Connections = false });
        client.DefaultRequestVersion = HttpVersion.Version20;
        client.DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact;
        return client;
    }
}
