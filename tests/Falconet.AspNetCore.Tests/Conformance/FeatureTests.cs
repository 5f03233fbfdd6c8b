using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Conformance;

/// <summary>
/// Kestrel's server features, checked on Kestrel and on Falconet (the derived classes): which ones a request finds (the table
/// of docs/aspnetcore.md, one row per feature), and what each of those that Falconet offers does.
/// </summary>
public abstract class FeatureTests
{
    protected abstract WebServer Server { get; }

    private bool OnKestrel => Server == WebServer.Kestrel;

    /// <summary>
    /// Every server feature interface Kestrel offers on an HTTP/1.1 connection, or on HTTP/2 only, and whether each server
    /// offers it to a request over plain HTTP/1.1 (TLS ones: over HTTPS). The rows of the table in docs/aspnetcore.md.
    /// </summary>
    public static readonly (Type Feature, bool Kestrel, bool Falconet, bool Tls)[] Table =
    [
        (typeof(IHttpRequestFeature), true, true, false),
        (typeof(IHttpResponseFeature), true, true, false),
        (typeof(IHttpResponseBodyFeature), true, true, false),
        (typeof(IRequestBodyPipeFeature), true, true, false),
        (typeof(IHttpRequestBodyDetectionFeature), true, true, false),
        (typeof(IHttpConnectionFeature), true, true, false),
        (typeof(IHttpRequestLifetimeFeature), true, true, false),
        (typeof(IHttpRequestIdentifierFeature), true, true, false),
        (typeof(IHttpMaxRequestBodySizeFeature), true, true, false),
        (typeof(IHttpBodyControlFeature), true, true, false),
        (typeof(IHttpMinRequestBodyDataRateFeature), true, true, false),
        (typeof(IHttpMinResponseDataRateFeature), true, true, false),
        (typeof(IHttpRequestTrailersFeature), true, true, false),
        (typeof(IBadRequestExceptionFeature), true, true, false),
        (typeof(IPersistentStateFeature), true, true, false),
        (typeof(IHttpUpgradeFeature), true, true, false),
        (typeof(IHttpExtendedConnectFeature), true, true, false),
        (typeof(IEndpointFeature), true, true, false),
        (typeof(IRouteValuesFeature), true, true, false),
        (typeof(IConnectionIdFeature), true, true, false),
        (typeof(IConnectionItemsFeature), true, true, false),
        (typeof(IConnectionLifetimeFeature), true, true, false),
        (typeof(IConnectionLifetimeNotificationFeature), true, true, false),
        (typeof(IConnectionCompleteFeature), true, true, false),
        (typeof(IConnectionHeartbeatFeature), true, false, false),
        (typeof(IConnectionSocketFeature), true, false, false),
        (typeof(IConnectionTransportFeature), true, false, false),
        (typeof(IMemoryPoolFeature), true, false, false),
#pragma warning disable CA2252 // WebTransport is a preview feature: listed only to check that a request finds it or not.
        (typeof(IHttpWebTransportFeature), true, false, false),
#pragma warning restore CA2252
        (typeof(IHttpResponseTrailersFeature), false, false, false),
        (typeof(IHttpResetFeature), false, false, false),
        (typeof(IHttp2StreamIdFeature), false, false, false),
        (typeof(ITlsConnectionFeature), true, true, true),
        (typeof(ITlsHandshakeFeature), true, true, true),
        (typeof(ITlsApplicationProtocolFeature), true, true, true),
        (typeof(ISslStreamFeature), true, false, true),
        (typeof(IHttpsCompressionFeature), false, true, true),
    ];

    public static TheoryData<string> Rows => new(Table.Select(row => row.Feature.Name));

    private Task<AspNetTestApp> StartAsync(Action<WebApplication> map, bool https = false, Action<WebApplicationBuilder>? configure = null)
        => AspNetTestApp.StartAsync(Server, map, builder =>
        {
            AspNetTestApp.UseTestCertificate(builder, Server);
            if (OnKestrel)
            {
                // HTTP/1.1, as Falconet: the table compares the features of HTTP/1.1 requests.
                builder.WebHost.ConfigureKestrel(kestrel => kestrel.ConfigureEndpointDefaults(e => e.Protocols = HttpProtocols.Http1));
            }

            configure?.Invoke(builder);
        }, ["--urls", https ? "https://127.0.0.1:0" : "http://127.0.0.1:0"]);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(Rows))]
    public async Task A_request_finds_the_feature_exactly_when_the_table_says_this_server_offers_it(string feature)
    {
        (Type type, bool kestrel, bool falconet, bool tls) = Table.Single(row => row.Feature.Name == feature);
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) => context.Features[type] is not null), tls);
        (await host.Http.GetStringAsync("")).ShouldBe((OnKestrel ? kestrel : falconet) ? "true" : "false", feature);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_minimum_data_rates_of_a_request_read_back_as_set_and_null_turns_them_off()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
        {
            var body = context.Features.Get<IHttpMinRequestBodyDataRateFeature>()!;
            var response = context.Features.Get<IHttpMinResponseDataRateFeature>()!;
            string defaults = $"{body.MinDataRate?.BytesPerSecond}/{body.MinDataRate?.GracePeriod}|{response.MinDataRate?.BytesPerSecond}";
            body.MinDataRate = null;
            response.MinDataRate = new MinDataRate(500, TimeSpan.FromSeconds(3));
            return $"{defaults}|{body.MinDataRate is null}|{response.MinDataRate!.BytesPerSecond}/{response.MinDataRate.GracePeriod}";
        }));

        (await host.Http.GetStringAsync("")).ShouldBe("240/00:00:05|240|True|500/00:00:03");
        (await host.Http.GetStringAsync("")).ShouldBe("240/00:00:05|240|True|500/00:00:03");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Request_trailers_are_available_once_the_body_has_been_read()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapPost("/", async (HttpContext context) =>
        {
            var trailers = context.Features.Get<IHttpRequestTrailersFeature>()!;
            bool before = trailers.Available;
            await context.Request.Body.CopyToAsync(Stream.Null);
            return $"{before}|{trailers.Available}|{trailers.Trailers["X-Checksum"]}|{context.Request.GetTrailer("x-other")}";
        }));

        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\nX-Other: 2\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("False|True|abc|2");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_error_of_a_malformed_body_is_kept_in_the_bad_request_feature()
    {
        var seen = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(app => app.MapPost("/", async (HttpContext context) =>
        {
            var feature = context.Features.Get<IBadRequestExceptionFeature>()!;
            string before = feature.Error?.GetType().Name ?? "none";
            try
            {
                await context.Request.Body.CopyToAsync(Stream.Null);
            }
            catch (Microsoft.AspNetCore.Http.BadHttpRequestException)
            {
            }

            seen.TrySetResult($"{before}|{feature.Error?.GetType().Name}");
        }));

        // The application swallowed the error and answered 200: Kestrel sends that answer to a malformed request, Falconet
        // answers 400 itself (RFC 9112 section 7.1: the message framing is broken, and the connection closes either way).
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(OnKestrel ? 200 : 400);
        // Falconet records the error where the read failed, so the application's own handler sees it; Kestrel records it when
        // it handles the failure itself, after the application (there for exception-handling middleware).
        (await seen.Task.WaitAsync(TestTimeouts.Operation)).ShouldBe(OnKestrel ? "none|" : "none|BadHttpRequestException");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Persistent_state_connection_items_and_the_connection_id_last_as_long_as_the_connection()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
        {
            var state = context.Features.Get<IPersistentStateFeature>()!.State;
            var items = context.Features.Get<IConnectionItemsFeature>()!.Items;
            int count = (int)(state.TryGetValue("count", out object? value) ? value! : 0) + 1;
            state["count"] = count;
            items["seen"] = count;
            string id = context.Features.Get<IConnectionIdFeature>()!.ConnectionId;
            return $"{count}|{id == context.Connection.Id}";
        }));

        using RawClient first = host.Connect();
        await first.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await first.ReadResponseAsync()).BodyText.ShouldBe("1|True");
        (await first.ReadResponseAsync()).BodyText.ShouldBe("2|True");
        using RawClient second = host.Connect();
        await second.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await second.ReadResponseAsync()).BodyText.ShouldBe("1|True");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task ConnectionClosed_fires_and_connection_OnCompleted_callbacks_run_once_the_client_closes()
    {
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var completed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
        {
            context.Features.Get<IConnectionLifetimeFeature>()!.ConnectionClosed.Register(() => closed.TrySetResult());
            context.Features.Get<IConnectionCompleteFeature>()!.OnCompleted(_ =>
            {
                completed.TrySetResult();
                return Task.CompletedTask;
            }, new object());
            return "registered";
        }));

        using (RawClient client = host.Connect())
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("registered");
            await Task.Delay(100);
            closed.Task.IsCompleted.ShouldBeFalse();
            completed.Task.IsCompleted.ShouldBeFalse();
        }

        await closed.Task.WaitAsync(TestTimeouts.Operation);
        await completed.Task.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task ConnectionClosedRequested_fires_when_the_host_stops_and_RequestClose_closes_after_the_response()
    {
        var waiting = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        AspNetTestApp host = await StartAsync(app =>
        {
            app.MapGet("/wait", async (HttpContext context) =>
            {
                CancellationToken requested = context.Features.Get<IConnectionLifetimeNotificationFeature>()!.ConnectionClosedRequested;
                waiting.TrySetResult();
                await Task.Delay(Timeout.Infinite, requested).ContinueWith(_ => { }, TaskScheduler.Default);
                return "asked to close";
            });
            app.MapGet("/close", (HttpContext context) =>
            {
                context.Features.Get<IConnectionLifetimeNotificationFeature>()!.RequestClose();
                return "closing";
            });
        });
        try
        {
            using (RawClient client = host.Connect())
            {
                await client.SendAsync("GET /close HTTP/1.1\r\nHost: test\r\n\r\n");
                RawResponse response = await client.ReadResponseAsync();
                response.BodyText.ShouldBe("closing");
                response.Header("Connection").ShouldBe("close");
                (await client.IsClosedByServerAsync()).ShouldBeTrue();
            }

            using RawClient waiter = host.Connect();
            await waiter.SendAsync("GET /wait HTTP/1.1\r\nHost: test\r\n\r\n");
            await waiting.Task.WaitAsync(TestTimeouts.Operation);
            Task stopping = host.App.StopAsync();
            (await waiter.ReadResponseAsync()).BodyText.ShouldBe("asked to close");
            await stopping.WaitAsync(TestTimeouts.Operation);
        }
        finally
        {
            await host.DisposeAsync();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Synchronous_IO_is_refused_unless_the_request_allows_it()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
        {
            Exception? refused = Record.Exception(() => context.Response.Body.Write("x"u8));
            context.Features.Get<IHttpBodyControlFeature>()!.AllowSynchronousIO = true;
            context.Response.Body.Write("allowed"u8);
            context.Response.Body.Write(System.Text.Encoding.ASCII.GetBytes("|" + refused?.GetType().Name));
        }));

        (await host.Http.GetStringAsync("")).ShouldBe("allowed|InvalidOperationException");
    }

    /// <summary>Whether this server runs handlers on the connection's own I/O thread (Falconet's libuv loop).</summary>
    protected virtual bool HandlersRunOnIoThread => false;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_synchronous_body_read_that_would_wait_fails_on_the_io_thread_and_waits_elsewhere()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapPost("/", (HttpContext context) =>
        {
            context.Features.Get<IHttpBodyControlFeature>()!.AllowSynchronousIO = true;
            byte[] buffer = new byte[16];
            int total = 0;
            try
            {
                int read;
                while ((read = context.Request.Body.Read(buffer, total, buffer.Length - total)) > 0)
                {
                    total += read;
                }

                return "read:" + System.Text.Encoding.ASCII.GetString(buffer, 0, total);
            }
            catch (InvalidOperationException)
            {
                return "refused after " + total;
            }
        }));

        // The body in the same write as the head: buffered when the handler reads, so it reads on every thread.
        using (RawClient together = host.Connect())
        {
            await together.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello");
            (await together.ReadResponseAsync()).BodyText.ShouldBe("read:hello");
        }

        // The body later than the head: a thread that can wait waits for it; the I/O thread refuses instead of hanging,
        // and the connection still answers its next request.
        using RawClient late = host.Connect();
        await late.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\n");
        await Task.Delay(200);
        await late.SendAsync("hello");
        (await late.ReadResponseAsync()).BodyText.ShouldBe(HandlersRunOnIoThread ? "refused after 0" : "read:hello");
        await late.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nok");
        (await late.ReadResponseAsync()).BodyText.ShouldBe("read:ok");
    }
}

public sealed class FeatureTestsOnKestrel : FeatureTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class FeatureTestsOnFalconetSockets : FeatureTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class FeatureTestsOnFalconetLibuv : FeatureTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;

    protected override bool HandlersRunOnIoThread => true;
}
