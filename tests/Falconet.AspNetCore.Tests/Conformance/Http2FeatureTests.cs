using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.Extensions.Configuration;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Conformance;

/// <summary>
/// The features of an HTTP/2 request, asked of Kestrel and Falconet alike over h2c (prior knowledge) with HttpClient:
/// <see cref="HttpProtocol.Http2"/>, response trailers, the stream's reset with an error code, the stream id, and no upgrade.
/// </summary>
public abstract class Http2FeatureTests
{
    protected abstract WebServer Server { get; }

    private async Task<AspNetTestApp> StartAsync(Action<WebApplication> map)
    {
        string section = AspNetTestApp.ConfigurationSection(Server);
        return await AspNetTestApp.StartAsync(Server, map, builder =>
            builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
            {
                [$"{section}:Endpoints:H2c:Url"] = "http://127.0.0.1:0",
                [$"{section}:Endpoints:H2c:Protocols"] = "Http2",
            }), args: []);
    }

    private static HttpRequestMessage Http2Get(string path) => new(HttpMethod.Get, path)
    {
        Version = HttpVersion.Version20,
        VersionPolicy = HttpVersionPolicy.RequestVersionExact,
    };

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_HTTP2_request_finds_the_stream_features_and_no_upgrade()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/features", (HttpContext context) =>
        {
            IFeatureCollection features = context.Features;
            return string.Join(' ',
                context.Request.Protocol,
                HttpProtocol.IsHttp2(context.Request.Protocol),
                features.Get<IHttpResponseTrailersFeature>() is not null,
                features.Get<IHttpResetFeature>() is not null,
                features.Get<IHttp2StreamIdFeature>()?.StreamId,
                features.Get<IHttpUpgradeFeature>()?.IsUpgradableRequest ?? false,
                features.Get<IHttpExtendedConnectFeature>()?.IsExtendedConnect ?? false);
        }));

        using HttpResponseMessage first = await host.Http.SendAsync(Http2Get("features"));
        first.Version.ShouldBe(HttpVersion.Version20);
        (await first.Content.ReadAsStringAsync()).ShouldBe("HTTP/2 True True True 1 False False");

        // The same connection's next stream: its own id.
        using HttpResponseMessage second = await host.Http.SendAsync(Http2Get("features"));
        (await second.Content.ReadAsStringAsync()).ShouldBe("HTTP/2 True True True 3 False False");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Response_trailers_set_by_the_application_reach_the_client_after_the_body()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/trailers", async (HttpContext context) =>
        {
            context.Response.DeclareTrailer("x-checksum");
            await context.Response.WriteAsync("body");
            context.Response.AppendTrailer("x-checksum", "c0ffee");
        }));

        using HttpResponseMessage response = await host.Http.SendAsync(Http2Get("trailers"));
        (await response.Content.ReadAsStringAsync()).ShouldBe("body");
        response.TrailingHeaders.GetValues("x-checksum").Single().ShouldBe("c0ffee");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task IHttpResetFeature_resets_the_stream_with_the_applications_error_code_and_the_connection_goes_on()
    {
        await using AspNetTestApp host = await StartAsync(app =>
        {
            app.MapGet("/reset", (HttpContext context) => context.Features.Get<IHttpResetFeature>()!.Reset(0x8));
            app.MapGet("/after", () => "still here");
        });

        HttpRequestException failure = await Should.ThrowAsync<HttpRequestException>(() => host.Http.SendAsync(Http2Get("reset")));
        HttpProtocolException reset = failure.InnerException.ShouldBeOfType<HttpProtocolException>();
        reset.ErrorCode.ShouldBe(0x8);

        using HttpResponseMessage after = await host.Http.SendAsync(Http2Get("after"));
        (await after.Content.ReadAsStringAsync()).ShouldBe("still here");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task ConnectionClosed_fires_once_the_HTTP2_connection_closes()
    {
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/watch", (HttpContext context) =>
        {
            context.Features.Get<IConnectionLifetimeFeature>()!.ConnectionClosed.Register(() => closed.TrySetResult());
            return "watching";
        }));

        using (var client = new HttpClient { BaseAddress = host.BaseAddress, Timeout = TestTimeouts.Operation })
        {
            using HttpResponseMessage response = await client.SendAsync(Http2Get("watch"));
            (await response.Content.ReadAsStringAsync()).ShouldBe("watching");
            closed.Task.IsCompleted.ShouldBeFalse();
        }

        // Disposing the client closes its connection.
        await closed.Task.WaitAsync(TestTimeouts.Operation);
    }
}

public sealed class Http2FeatureTestsOnKestrel : Http2FeatureTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class Http2FeatureTestsOnFalconetSockets : Http2FeatureTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class Http2FeatureTestsOnFalconetLibuv : Http2FeatureTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;
}
