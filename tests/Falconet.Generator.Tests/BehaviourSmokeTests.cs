using System.Linq;
using Shouldly;

namespace Falconet.Generator.Tests;

/// <summary>A few end-to-end uses of the compiled output; the exhaustive matcher and collection suites live elsewhere.</summary>
public sealed class BehaviourSmokeTests
{
    private const string DefaultDriver = """
        using System.Buffers;
        using System.Text;
        using Microsoft.Extensions.Primitives;
        using Smoke.Http;

        namespace Smoke;

        public static class Driver
        {
            public static string Run()
            {
                var log = new StringBuilder();
                Method(log, "GET / HTTP/1.1"u8);
                Method(log, "OPTIONS * HTTP/1.1"u8);
                Method(log, "get / HTTP/1.1"u8);
                Method(log, "GET /"u8);
                Method(log, "BREW /pot HTTP/1.1"u8);
                Method(log, "GET"u8);
                Method(log, " GET /"u8);
                log.Append('\n');
                log.Append(KnownVersions.Match("HTTP/1.1\r\n"u8)).Append(' ').Append(KnownVersions.Match("HTTP/1.2"u8)).Append('\n');

                var request = new RequestHeaders();
                request.Append("HOST"u8, "example.com"u8);
                request.Append("connection"u8, "keep-alive"u8);
                request.Append("Content-Length"u8, "42"u8);
                request.Append("X-Custom"u8, "a"u8);
                request.Append("x-custom"u8, "b"u8);
                request.Append("Accept"u8, "text/html"u8);
                request.Append("accept"u8, "*/*"u8);
                log.Append(request.Count).Append(' ').Append(request.Host).Append(' ').Append(request.ContentLength)
                    .Append(' ').Append(request["X-CUSTOM"]).Append(' ').Append(request.Accept.Count).Append('\n');
                foreach (var pair in request)
                {
                    log.Append(pair.Key).Append('=').Append(pair.Value).Append(';');
                }

                log.Append('\n');
                string host = request.Host.ToString();
                bool sharedKeepAlive = object.ReferenceEquals(request.Connection.ToString(), "keep-alive");
                log.Append(request.TryAppend("Content-Length"u8, "43"u8)).Append(' ').Append(request.TryAppend("Content-Length"u8, "4x"u8)).Append('\n');
                request.Clear();
                log.Append(request.Count).Append(' ').Append(request.ContainsKey("Host")).Append(' ');
                request.Append("Host"u8, "example.com"u8);
                log.Append(object.ReferenceEquals(host, request.Host.ToString())).Append(' ').Append(sharedKeepAlive).Append(' ');
                log.Append(request.Remove("host")).Append(' ').Append(request.Count).Append('\n');

                var response = new ResponseHeaders();
                response.Server = "falconet";
                response.ContentType = "text/plain";
                response.ContentLength = 5;
                response["X-Request-Id"] = "7";
                response["set-cookie"] = new StringValues(new[] { "a=1", "b=2" });
                var writer = new ArrayBufferWriter<byte>();
                response.CopyTo(ref writer);
                log.Append(Encoding.ASCII.GetString(writer.WrittenSpan).Replace("\r\n", "|"));
                return log.ToString();
            }

            private static void Method(StringBuilder log, System.ReadOnlySpan<byte> line)
            {
                KnownMethod method = KnownMethods.Match(line, out int length);
                log.Append(method).Append(':').Append(length).Append(' ');
            }
        }
        """;

    [Fact]
    public void Default_schema_types_match_methods_collect_headers_and_write_responses()
    {
        string output = CompiledOutput.Run(CompiledOutput.DefaultSources().Append(DefaultDriver), "Smoke.Driver");

        output.ShouldBe(
            "Get:3 Options:7 Custom:3 Get:3 Custom:4 None:0 None:0 \n" +
            "Http11 None\n" +
            "5 example.com 42 a,b 2\n" +
            "Accept=text/html,*/*;Host=example.com;Connection=keep-alive;Content-Length=42;X-Custom=a,b;\n" +
            "False False\n" +
            "0 False True True True 0\n" +
            "|Server: falconet|Content-Type: text/plain|Set-Cookie: a=1|Set-Cookie: b=2|Content-Length: 5|X-Request-Id: 7");
    }

    [Fact]
    public void Custom_schema_matches_a_method_longer_than_8_bytes_on_both_paths()
    {
        const string driver = """
            using System.Text;
            using Custom.Http;

            namespace Smoke;

            public static class Driver
            {
                public static string Run()
                {
                    var log = new StringBuilder();
                    foreach (string line in new[] { "PROPFIND /a HTTP/1.1", "PROPFIND /", "PROPFIND", "PROPFINDX /", "PURGE /x", "PURGE /", "GET /" })
                    {
                        KnownMethod method = KnownMethods.Match(Encoding.ASCII.GetBytes(line), out int length);
                        log.Append(method).Append(':').Append(length).Append(' ');
                    }

                    var headers = new RequestHeaders();
                    headers.Append("etag"u8, "\"x\""u8);
                    headers.Append("X-TRACE"u8, "on"u8);
                    log.Append(headers.ETag).Append(' ').Append(object.ReferenceEquals(headers.XTrace.ToString(), "on"));
                    return log.ToString();
                }
            }
            """;

        string output = CompiledOutput.Run(CompiledOutput.CustomSources().Append(driver), "Smoke.Driver");

        output.ShouldBe("Propfind:8 Propfind:8 None:0 Custom:9 Purge:5 Purge:5 Get:3 \"x\" True");
    }

    [Fact]
    public void An_app_header_set_matches_its_own_headers_as_known_and_writes_them_from_its_table()
    {
        const string schema = """
            {
              "requestHeaders": [{ "name": "X-Tenant-Id", "values": ["blue"] }, { "name": "X-Request-Id" }],
              "responseHeaders": [{ "name": "X-Served-By" }]
            }
            """;
        const string driver = """
            using System.Buffers;
            using System.Text;
            using Falconet.Http;
            using Team.Api;

            namespace Smoke;

            public static class Driver
            {
                public static string Run()
                {
                    var log = new StringBuilder();
                    var request = new RequestHeaders<HeaderSet>();
                    request.TryAppend("x-TENANT-id"u8, "blue"u8);
                    request.TryAppend("X-Request-ID"u8, "r-1"u8);
                    request.TryAppend("HOST"u8, "example.test"u8);
                    request.TryAppend("X-Other"u8, "o"u8);
                    log.Append(request.XTenantId).Append(' ').Append(request.XRequestId).Append(' ').Append(request.Host).Append(' ').Append(request.Count).Append('\n');
                    log.Append(object.ReferenceEquals(request.XTenantId.ToString(), "blue")).Append(' ').Append(HeaderSet.IndexOfRequestHeader("X-TENANT-ID"u8)).Append('\n');
                    foreach (var pair in request)
                    {
                        log.Append(pair.Key).Append('=').Append(pair.Value).Append(';');
                    }

                    log.Append('\n');
                    var response = new ResponseHeaders<HeaderSet> { XServedBy = "edge-1", Server = "falconet" };
                    response["x-served-by"] = "edge-2";
                    var writer = new ArrayBufferWriter<byte>();
                    response.CopyTo(ref writer);
                    log.Append(Encoding.ASCII.GetString(writer.WrittenSpan).Replace("\r\n", "|"));
                    return log.ToString();
                }
            }
            """;
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json", schema));
        result.Diagnostics.ShouldBeEmpty();

        string output = CompiledOutput.Run(GeneratorHarness.Sources(result).Values.Append(driver), "Smoke.Driver");

        // Known names land under their schema spelling in bit order (defaults first, then the app's); only X-Other is unknown.
        output.ShouldBe(
            "blue r-1 example.test 4\n" +
            "True 53\n" +
            "Host=example.test;X-Tenant-Id=blue;X-Request-Id=r-1;X-Other=o;\n" +
            "|Server: falconet|X-Served-By: edge-2");
    }
}
