using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Http;
using System.Net.Http.Json;
using System.Runtime.Versioning;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Conformance;

/// <summary>
/// Unix domain socket endpoints written as Kestrel writes them ("http://unix:/path/app.sock"), in <c>--urls</c> and in the
/// configuration section, over plain HTTP and TLS: the same test on Kestrel and on Falconet's two transports, with a real
/// HttpClient connected to the socket's file.
/// </summary>
public abstract class UnixSocketTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("falconet-uds-").FullName;

    protected abstract WebServer Server { get; }

    protected string SocketPath => Path.Combine(_directory, "app.sock");

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    protected record struct Greeting(string Name, int Count);

    protected static void Map(WebApplication app)
    {
        app.MapGet("/hello", (HttpContext context) => $"Hello over {context.Request.Scheme}");
        app.MapGet("/who", (HttpContext context) =>
            $"{context.Connection.RemoteIpAddress?.ToString() ?? "none"} {context.Connection.LocalIpAddress?.ToString() ?? "none"} {context.Request.Host}");
        app.MapPost("/echo", (Greeting greeting) => greeting with { Count = greeting.Count + 1 });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_http_unix_address_in_urls_serves_requests_over_the_socket_and_the_file_is_removed_at_stop()
    {
        AspNetTestApp host = await AspNetTestApp.StartAsync(Server, Map, args: ["--urls", $"http://unix:{SocketPath}"]);
        await using (host)
        {
            host.Addresses.Length.ShouldBe(1);
            host.UnixSocketPath.ShouldBe(SocketPath);
            (File.GetAttributes(SocketPath) & FileAttributes.Directory).ShouldBe((FileAttributes)0);

            (await host.Http.GetStringAsync("hello")).ShouldBe("Hello over http");
            (await host.Http.GetStringAsync("who")).ShouldBe("none none localhost");
            using HttpResponseMessage echoed = await host.Http.PostAsJsonAsync("echo", new Greeting("unix", 41));
            (await echoed.Content.ReadFromJsonAsync<Greeting>()).ShouldBe(new Greeting("unix", 42));
        }

        File.Exists(SocketPath).ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_https_unix_address_serves_TLS_over_the_socket()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Server, Map,
            builder => AspNetTestApp.UseTestCertificate(builder, Server), ["--urls", $"https://unix:{SocketPath}"]);

        host.BaseAddress.Scheme.ShouldBe("https");
        (await host.Http.GetStringAsync("hello")).ShouldBe("Hello over https");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_unix_socket_endpoint_of_the_configuration_section_is_served()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Server, Map, builder =>
            builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
            {
                [$"{AspNetTestApp.ConfigurationSection(Server)}:Endpoints:Local:Url"] = $"http://unix:{SocketPath}",
            }), args: []);

        host.UnixSocketPath.ShouldBe(SocketPath);
        (await host.Http.GetStringAsync("hello")).ShouldBe("Hello over http");
    }
}

public sealed class UnixSocketTestsOnKestrel : UnixSocketTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class UnixSocketTestsOnFalconetSockets : FalconetUnixSocketTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class UnixSocketTestsOnFalconetLibuv : FalconetUnixSocketTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;
}

/// <summary>What Falconet adds to Kestrel's Unix sockets: the socket file's mode, set before any client can connect.</summary>
[UnsupportedOSPlatform("windows")]
public abstract class FalconetUnixSocketTests : UnixSocketTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("660", UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite)]
    [InlineData("0600", UnixFileMode.UserRead | UnixFileMode.UserWrite)]
    [InlineData("UserRead, UserWrite, OtherWrite", UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.OtherWrite)]
    public async Task The_UnixSocketPermissions_setting_gives_the_socket_file_its_mode(string setting, UnixFileMode expected)
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Server, Map, builder =>
            builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
            {
                ["Falconet:UnixSocketPermissions"] = setting,
            }), ["--urls", $"http://unix:{SocketPath}"]);

        File.GetUnixFileMode(SocketPath).ShouldBe(expected);
        (await host.Http.GetStringAsync("hello")).ShouldBe("Hello over http");
    }
}
