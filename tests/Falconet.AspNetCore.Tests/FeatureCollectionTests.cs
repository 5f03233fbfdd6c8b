using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// The connection's feature collection as the framework and applications use it: typed and untyped access agree, and what a
/// request set is gone for the next request of the connection (sockets, and libuv below).
/// </summary>
public class FeatureCollectionTests
{
    protected virtual TransportKind Transport => TransportKind.Sockets;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_endpoint_a_request_was_routed_to_is_gone_before_routing_the_next_request_of_the_connection()
    {
        var seenBeforeRouting = new List<string>();
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app =>
        {
            app.Use((context, next) =>
            {
                seenBeforeRouting.Add(context.GetEndpoint()?.DisplayName ?? "none");
                return next(context);
            });
            app.UseRouting();
            app.MapGet("/", () => "routed").WithDisplayName("root");
        });

        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("routed");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("routed");
        seenBeforeRouting.ShouldBe(["none", "none"]);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Features_set_typed_read_untyped_and_the_other_way_round_and_are_enumerated()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app => app.MapGet("/", (HttpContext context) =>
        {
            IFeatureCollection features = context.Features;
            var routeValues = new RouteValuesFeature();
            features.Set<IRouteValuesFeature>(routeValues);
            var custom = new CustomFeature();
            features[typeof(CustomFeature)] = custom;
            var lifetime = new Lifetime();
            features[typeof(IHttpRequestLifetimeFeature)] = lifetime;

            bool agree = ReferenceEquals(features[typeof(IRouteValuesFeature)], routeValues)
                && ReferenceEquals(features.Get<CustomFeature>(), custom)
                && ReferenceEquals(features.Get<IHttpRequestLifetimeFeature>(), lifetime)
                && features.Count(pair => pair.Key == typeof(IRouteValuesFeature) && ReferenceEquals(pair.Value, routeValues)) == 1
                && features.Count(pair => pair.Key == typeof(CustomFeature)) == 1;

            features.Set<CustomFeature>(null);
            bool removed = features.Get<CustomFeature>() is null && !features.Any(pair => pair.Key == typeof(CustomFeature));
            return $"{agree} {removed}";
        }));

        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("True True");
    }

    private sealed class CustomFeature;

    private sealed class Lifetime : IHttpRequestLifetimeFeature
    {
        public System.Threading.CancellationToken RequestAborted { get; set; }

        public void Abort()
        {
        }
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class FeatureCollectionTestsOnLibuv : FeatureCollectionTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class FeatureCollectionTestsOnIoUring : FeatureCollectionTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
