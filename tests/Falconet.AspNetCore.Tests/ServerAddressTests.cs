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

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HTTP_PORTS_binds_every_address_on_that_port()
    {
        // The setting ASPNETCORE_HTTP_PORTS reaches the host as; the host turns it into http://*:19510.
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "ports"),
            builder => builder.WebHost.UseSetting("http_ports", "19510"), args: []);

        host.Server.Server!.BoundEndpoints.Single().Port.ShouldBe(19510);
        using var http = new HttpClient { Timeout = TestTimeouts.Operation };
        (await http.GetStringAsync("http://127.0.0.1:19510/")).ShouldBe("ports");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HTTPS_PORTS_binds_every_address_on_that_port_with_https()
    {
        // The setting ASPNETCORE_HTTPS_PORTS reaches the host as; the host turns it into https://*:21213.
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "secure ports"),
            builder =>
            {
                builder.WebHost.UseSetting("https_ports", "21213");
                builder.WebHost.ConfigureFalconetHttpsDefaults(tls => tls.ServerCertificate = TestCertificates.Server);
            }, args: []);

        host.Server.Server!.BoundHttpsEndpoints.Single().Port.ShouldBe(21213);
        (await host.Http.GetStringAsync("https://127.0.0.1:21213/")).ShouldBe("secure ports");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Endpoints_configured_on_the_options_win_over_urls()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(TransportKind.Sockets, app => app.MapGet("/", () => "options"),
            builder => builder.WebHost.ConfigureFalconet(options => options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 19511))),
            args: ["--urls", "http://127.0.0.1:19512"]);

        host.Server.Features.Get<IServerAddressesFeature>()!.Addresses.Single().ShouldBe("http://127.0.0.1:19511");
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
    public void Addresses_turn_into_the_endpoints_Kestrel_would_bind(string address, params string[] expected)
        => ListenAddress.Parse(address).EndPoints.Select(e => e.ToString()).ShouldBe(expected);

    [Theory]
    [InlineData("http://unix:/tmp/app.sock", "Unix domain sockets")]
    [InlineData("http://example.com:80", "names a host")]
    [InlineData("http://localhost:5000/base", "path base")]
    [InlineData("ftp://localhost:21", "http:// and https://")]
    [InlineData("http://localhost:99999", "not a port")]
    [InlineData("http://::1:80", "in brackets")]
    [InlineData("localhost", "not an endpoint")]
    public void Addresses_Falconet_cannot_bind_fail_with_a_message_that_says_why(string address, string reason)
        => Should.Throw<FormatException>(() => ListenAddress.Parse(address)).Message.ShouldContain(reason);
}
