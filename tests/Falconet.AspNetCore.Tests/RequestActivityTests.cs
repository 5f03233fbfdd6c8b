using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Shouldly;
using Xunit;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// ASP.NET Core's hosting makes an activity (and a logging scope) for every request and sets it as the current one before
/// the pipeline first waits. Each request must get a root activity, not a child of the request before it on the same
/// connection or loop: when the current activity leaked out of a request, every activity had the previous one as its
/// parent and the chain kept every request's activity, scope and state alive (the heap grew without bound under load).
/// On Kestrel as the reference and on Falconet, over HTTP/1.1 keep-alive and HTTP/2.
/// </summary>
public sealed class RequestActivityTests
{
    public static TheoryData<WebServer> Servers => new() { WebServer.Kestrel, WebServer.FalconetSockets, WebServer.FalconetLibuv };

    /// <summary>Answers with the parent of the request's activity ("root" when it has none), after going asynchronous.</summary>
    private static void MapActivity(WebApplication app) => app.MapGet("/activity", async () =>
    {
        string parent = Activity.Current is { } activity ? activity.ParentId ?? "root" : "no activity";
        await Task.Yield();
        return parent;
    });

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(Servers))]
    public async Task Each_request_of_a_kept_alive_HTTP1_connection_gets_a_root_activity(WebServer server)
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(server, MapActivity);
        using RawClient client = host.Connect();

        for (int i = 0; i < 4; i++)
        {
            await client.SendAsync("GET /activity HTTP/1.1\r\nHost: t\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
            response.StatusCode.ShouldBe(200);
            response.BodyText.ShouldBe("root", $"request {i + 1}");
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(Servers))]
    public async Task Each_stream_of_an_HTTP2_connection_gets_a_root_activity(WebServer server)
    {
        string section = AspNetTestApp.ConfigurationSection(server);
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(server, MapActivity, builder =>
            builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
            {
                [$"{section}:Endpoints:H2c:Url"] = "http://127.0.0.1:0",
                [$"{section}:Endpoints:H2c:Protocols"] = "Http2",
            }), args: []);
        using var client = new HttpClient(new SocketsHttpHandler { EnableMultipleHttp2Connections = false })
        {
            BaseAddress = host.BaseAddress,
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };

        // One after another, then eight at once, all on one connection.
        for (int i = 0; i < 3; i++)
        {
            (await client.GetStringAsync("/activity").WaitAsync(TestTimeouts.Operation)).ShouldBe("root", $"request {i + 1}");
        }

        string[] together = await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => client.GetStringAsync("/activity"))).WaitAsync(TestTimeouts.Operation);
        together.ShouldAllBe(parent => parent == "root");
    }
}
