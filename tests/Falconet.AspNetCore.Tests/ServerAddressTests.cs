using System;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Hosting;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>Where the server listens: --urls, HTTP_PORTS, explicit endpoints, and the addresses it reports.</summary>
public sealed class ServerAddressTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_urls_argument_is_bound_and_the_bound_port_is_reported()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "urls"),
            args: ["--urls", "http://127.0.0.1:0"]);

        string address = host.Server.Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        address.ShouldStartWith("http://127.0.0.1:");
        new Uri(address).Port.ShouldNotBe(0);
        (await host.Http.GetStringAsync("")).ShouldBe("urls");
    }

    [SkippableFact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HTTP_PORTS_binds_every_address_on_that_port()
    {
        Skip.IfNot(Ipv6.Supported, "every address is [::], which needs IPv6");
        // The setting ASPNETCORE_HTTP_PORTS reaches the host as http_ports; the host turns it into http://*:<port>. Port 0:
        // the system picks a free one, and the address reported is the bound one.
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "ports"),
            builder => builder.WebHost.UseSetting("http_ports", "0"), args: []);

        IPEndPoint bound = host.Server.Server!.BoundEndpoints.Single();
        bound.Address.ShouldBe(IPAddress.IPv6Any);
        bound.Port.ShouldNotBe(0);
        host.Server.Features.Get<IServerAddressesFeature>()!.Addresses.Single().ShouldBe($"http://[::]:{bound.Port}");
        using var http = new HttpClient { Timeout = TestTimeouts.Operation };
        (await http.GetStringAsync($"http://127.0.0.1:{bound.Port}/")).ShouldBe("ports");
    }

    [SkippableFact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HTTPS_PORTS_binds_every_address_on_that_port_with_https()
    {
        Skip.IfNot(Ipv6.Supported, "every address is [::], which needs IPv6");
        // The setting ASPNETCORE_HTTPS_PORTS reaches the host as https_ports; the host turns it into https://*:<port>.
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "secure ports"),
            builder =>
            {
                builder.WebHost.UseSetting("https_ports", "0");
                builder.WebHost.ConfigureFalconetHttpsDefaults(tls => tls.ServerCertificate = TestCertificates.Server);
            }, args: []);

        IPEndPoint bound = host.Server.Server!.BoundHttpsEndpoints.Single();
        bound.Address.ShouldBe(IPAddress.IPv6Any);
        host.Server.Features.Get<IServerAddressesFeature>()!.Addresses.Single().ShouldBe($"https://[::]:{bound.Port}");
        (await host.Http.GetStringAsync($"https://127.0.0.1:{bound.Port}/")).ShouldBe("secure ports");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Endpoints_configured_on_the_options_win_over_urls()
    {
        // The urls would bind two endpoints (localhost is 127.0.0.1 and ::1); the options' one endpoint wins.
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "options"),
            builder => builder.WebHost.ConfigureFalconet(options => options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0))),
            args: ["--urls", "http://localhost:0"]);

        IPEndPoint bound = host.Server.Server!.BoundEndpoints.Single();
        bound.Address.ShouldBe(IPAddress.Loopback);
        host.Server.Features.Get<IServerAddressesFeature>()!.Addresses.Single().ShouldBe($"http://127.0.0.1:{bound.Port}");
        host.Logs.Entries.ShouldContain(e => e.EventId == 504);
    }

    [Theory]
    [InlineData("http://localhost:5000", "127.0.0.1:5000", "[::1]:5000")]
    [InlineData("https://localhost:5001", "127.0.0.1:5001", "[::1]:5001")]
    [InlineData("http://localhost:0", "127.0.0.1:0")]
    [InlineData("http://*:8080", "[::]:8080")]
    [InlineData("http://+:8080", "[::]:8080")]
    [InlineData("http://0.0.0.0:8080", "[::]:8080")]
    [InlineData("http://10.1.2.3:81", "10.1.2.3:81")]
    [InlineData("http://[::1]:82", "[::1]:82")]
    [InlineData("http://[::1]:82/", "[::1]:82")]
    [InlineData("http://127.0.0.1", "127.0.0.1:80")]
    [InlineData("https://127.0.0.1", "127.0.0.1:443")]
    [InlineData("127.0.0.1:83", "127.0.0.1:83")]
    [InlineData("http://unix:/run/app/app.sock", "/run/app/app.sock")]
    [InlineData("https://unix:/run/app/app.sock/", "/run/app/app.sock")]
    public void Addresses_turn_into_the_endpoints_Kestrel_would_bind(string address, params string[] expected)
        => ListenAddress.Parse(address).EndPoints.Select(e => e.ToString()).ShouldBe(expected);

    [Theory]
    [InlineData("http://unix:app.sock", "absolute path")]
    [InlineData("http://unix:/tmp/app.sock:/base", "path base")]
    [InlineData("http://pipe:/app", "named pipes")]
    [InlineData("http://example.com:80", "names a host")]
    [InlineData("http://localhost:5000/base", "path base")]
    [InlineData("ftp://localhost:21", "http:// and https://")]
    [InlineData("http://localhost:99999", "not a port")]
    [InlineData("http://::1:80", "in brackets")]
    [InlineData("localhost", "not an endpoint")]
    public void Addresses_Falconet_cannot_bind_fail_with_a_message_that_says_why(string address, string reason)
        => Should.Throw<FormatException>(() => ListenAddress.Parse(address)).Message.ShouldContain(reason);
}
