using System.Collections.Generic;
using System.Linq;
using System.Text;

namespace Falconet.Http.Parsing.Tests.Support;

/// <summary>The request suite: valid requests with the transcript they produce, and invalid ones with their status.</summary>
internal static class RequestSuite
{
    /// <summary>Small limits so that the limit cases stay short; every valid request fits within them.</summary>
    public static HttpLimits Limits { get; } = new()
    {
        MaxRequestLineSize = 256,
        MaxRequestHeadersSize = 1024,
        MaxRequestHeaderCount = 20,
        MaxRequestBodySize = 4096,
        MaxChunkExtensionSize = 32,
    };

    private const string Browser =
        "GET /articles/42?ref=home&utm=x HTTP/1.1\r\n" +
        "Host: www.example.com\r\n" +
        "Connection: keep-alive\r\n" +
        "Upgrade-Insecure-Requests: 1\r\n" +
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36\r\n" +
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
        "Sec-Fetch-Site: same-origin\r\n" +
        "Sec-Fetch-Mode: navigate\r\n" +
        "Accept-Encoding: gzip, deflate, br, zstd\r\n" +
        "Accept-Language: en-US,en;q=0.9\r\n" +
        "Cookie: session=abc123; theme=dark\r\n" +
        "X-Custom-Trace: 00-4bf92f3577b34da6-01\r\n" +
        "\r\n";

    /// <summary>Valid requests: name, request text (Latin-1), expected transcript lines.</summary>
    public static IReadOnlyDictionary<string, (string Request, string[] Transcript)> Valid { get; } =
        new Dictionary<string, (string, string[])>
        {
            ["simple GET"] = ("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[Host]=[example.com]", "end of headers", "body None 0", "body []"]),
            ["HTTP/1.0 without headers"] = ("GET /index.html HTTP/1.0\r\n\r\n",
                ["GET (Get) /index.html Origin query=-1 Http10", "end of headers", "body None 0", "body []"]),
            ["query string"] = ("GET /search?q=falcon&lang=en HTTP/1.1\r\nHost: x\r\n\r\n",
                ["GET (Get) /search?q=falcon&lang=en Origin query=7 Http11", "[Host]=[x]", "end of headers", "body None 0", "body []"]),
            ["empty query"] = ("GET /a? HTTP/1.1\r\n\r\n",
                ["GET (Get) /a? Origin query=2 Http11", "end of headers", "body None 0", "body []"]),
            ["target with encoded and reserved characters"] = ("GET /a%20b/c;p=1?x=[1]&y={2}/?z HTTP/1.1\r\n\r\n",
                ["GET (Get) /a%20b/c;p=1?x=[1]&y={2}/?z Origin query=12 Http11", "end of headers", "body None 0", "body []"]),
            ["POST with Content-Length"] = ("POST /submit HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nhello world",
                ["POST (Post) /submit Origin query=-1 Http11", "[Host]=[x]", "[Content-Length]=[11]", "[Content-Type]=[text/plain]",
                 "end of headers", "body ContentLength 11", "body [hello world]"]),
            ["Content-Length zero"] = ("PUT /empty HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
                ["PUT (Put) /empty Origin query=-1 Http11", "[Content-Length]=[0]", "end of headers", "body None 0", "body []"]),
            ["repeated equal Content-Length"] = ("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
                ["POST (Post) / Origin query=-1 Http11", "[Content-Length]=[3]", "[Content-Length]=[3]", "end of headers",
                 "body ContentLength 3", "body [abc]"]),
            ["chunked with extensions"] = ("POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;name=value\r\n world\r\n0\r\n\r\n",
                ["POST (Post) /upload Origin query=-1 Http11", "[Transfer-Encoding]=[chunked]", "end of headers", "body Chunked -1",
                 "trailer end of headers", "body [hello world]"]),
            ["chunked with quoted extension and whitespace before it"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3 \t;a=\"b c\";d\r\nabc\r\n0\r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Transfer-Encoding]=[chunked]", "end of headers", "body Chunked -1",
                 "trailer end of headers", "body [abc]"]),
            ["chunked with trailers"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTrailer: Checksum\r\n\r\n4\r\ndata\r\n0\r\nChecksum: abc\r\nX-Note:  done \r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Transfer-Encoding]=[chunked]", "[Trailer]=[Checksum]", "end of headers",
                 "body Chunked -1", "trailer [Checksum]=[abc]", "trailer [X-Note]=[done]", "trailer end of headers", "body [data]"]),
            ["chunk sizes in either case with leading zeros"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n00A\r\n0123456789\r\nb\r\nabcdefghijk\r\n000\r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Transfer-Encoding]=[chunked]", "end of headers", "body Chunked -1",
                 "trailer end of headers", "body [0123456789abcdefghijk]"]),
            ["transfer codings case-insensitive with empty list elements"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: , CHUNKED ,\r\n\r\n1\r\nx\r\n0\r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Transfer-Encoding]=[, CHUNKED ,]", "end of headers", "body Chunked -1",
                 "trailer end of headers", "body [x]"]),
            ["custom method"] = ("PURGE /cache/item HTTP/1.1\r\nHost: x\r\n\r\n",
                ["PURGE (Custom) /cache/item Origin query=-1 Http11", "[Host]=[x]", "end of headers", "body None 0", "body []"]),
            ["custom method with punctuation"] = ("M-SEARCH /dav/ HTTP/1.1\r\n\r\n",
                ["M-SEARCH (Custom) /dav/ Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["methods are case-sensitive"] = ("get / HTTP/1.1\r\n\r\n",
                ["get (Custom) / Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["every known method"] = ("DELETE /x HTTP/1.1\r\n\r\n",
                ["DELETE (Delete) /x Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["HEAD"] = ("HEAD /x HTTP/1.1\r\n\r\n", ["HEAD (Head) /x Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["PATCH"] = ("PATCH /x HTTP/1.1\r\n\r\n", ["PATCH (Patch) /x Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["TRACE"] = ("TRACE /x HTTP/1.1\r\n\r\n", ["TRACE (Trace) /x Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["absolute-form"] = ("GET http://example.com:8080/path?x=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
                ["GET (Get) http://example.com:8080/path?x=1 Absolute query=28 Http11", "[Host]=[example.com:8080]", "end of headers", "body None 0", "body []"]),
            ["absolute-form https without path"] = ("GET HTTPS://example.com HTTP/1.1\r\n\r\n",
                ["GET (Get) HTTPS://example.com Absolute query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["absolute-form with IPv6 literal"] = ("GET http://[::1]:80/?a HTTP/1.1\r\n\r\n",
                ["GET (Get) http://[::1]:80/?a Absolute query=16 Http11", "end of headers", "body None 0", "body []"]),
            ["asterisk-form"] = ("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
                ["OPTIONS (Options) * Asterisk query=-1 Http11", "[Host]=[x]", "end of headers", "body None 0", "body []"]),
            ["authority-form"] = ("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                ["CONNECT (Connect) example.com:443 Authority query=-1 Http11", "[Host]=[example.com:443]", "end of headers", "body None 0", "body []"]),
            ["authority-form with IPv6 literal"] = ("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n",
                ["CONNECT (Connect) [2001:db8::1]:8443 Authority query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["browser request with many headers"] = (Browser,
                ["GET (Get) /articles/42?ref=home&utm=x Origin query=12 Http11", "[Host]=[www.example.com]", "[Connection]=[keep-alive]",
                 "[Upgrade-Insecure-Requests]=[1]",
                 "[User-Agent]=[Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36]",
                 "[Accept]=[text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8]", "[Sec-Fetch-Site]=[same-origin]",
                 "[Sec-Fetch-Mode]=[navigate]", "[Accept-Encoding]=[gzip, deflate, br, zstd]", "[Accept-Language]=[en-US,en;q=0.9]",
                 "[Cookie]=[session=abc123; theme=dark]", "[X-Custom-Trace]=[00-4bf92f3577b34da6-01]", "end of headers", "body None 0", "body []"]),
            ["obs-text in values"] = ("GET / HTTP/1.1\r\nX-Name: caf\u00e9 \u00ff\u0080\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[X-Name]=[caf\u00e9 \u00ff\u0080]", "end of headers", "body None 0", "body []"]),
            ["empty values"] = ("GET / HTTP/1.1\r\nX-Empty:\r\nX-Blank: \t \r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[X-Empty]=[]", "[X-Blank]=[]", "end of headers", "body None 0", "body []"]),
            ["OWS trimmed around the value but kept inside"] = ("GET / HTTP/1.1\r\nX-Trim: \t  spaced \t value \t \r\nX-Tight:v\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[X-Trim]=[spaced \t value]", "[X-Tight]=[v]", "end of headers", "body None 0", "body []"]),
            ["every tchar in a name"] = ("GET / HTTP/1.1\r\n!#$%&'*+-.^_`|~09AZaz: \"q\" (c) <>@,;:\\/[]?={}\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[!#$%&'*+-.^_`|~09AZaz]=[\"q\" (c) <>@,;:\\/[]?={}]", "end of headers", "body None 0", "body []"]),
            ["colon inside the value"] = ("GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[Host]=[example.com:8080]", "end of headers", "body None 0", "body []"]),
            ["pipelined request left unconsumed"] = ("GET /first HTTP/1.1\r\n\r\nGET /second HTTP/1.1\r\n\r\n",
                ["GET (Get) /first Origin query=-1 Http11", "end of headers", "body None 0", "body []", "left 24"]),
            ["empty line before the request line"] = ("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[Host]=[x]", "end of headers", "body None 0", "body []"]),
            ["several empty lines before the request line"] = ("\r\n\r\n\r\nPOST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nok",
                ["POST (Post) /p Origin query=-1 Http11", "[Content-Length]=[2]", "end of headers", "body ContentLength 2", "body [ok]"]),
            ["empty lines filling the request-line limit with the line"] = (string.Concat(Enumerable.Repeat("\r\n", 100)) + "GET /" + new string('a', 40) + " HTTP/1.1\r\n\r\n",
                ["GET (Get) /" + new string('a', 40) + " Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["body followed by CRLF and a pipelined request"] = ("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nok\r\nGET / HTTP/1.1\r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Content-Length]=[2]", "end of headers", "body ContentLength 2", "body [ok]", "left 20"]),
            ["HTTP/1.2 processed as HTTP/1.1"] = ("GET / HTTP/1.2\r\nHost: x\r\n\r\n",
                ["GET (Get) / Origin query=-1 Http11", "[Host]=[x]", "end of headers", "body None 0", "body []"]),
            ["HTTP/1.9 processed as HTTP/1.1"] = ("POST / HTTP/1.9\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Transfer-Encoding]=[chunked]", "end of headers", "body Chunked -1",
                 "trailer end of headers", "body [x]"]),
            ["custom method of the longest length"] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDE / HTTP/1.1\r\n\r\n",
                ["ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDE (Custom) / Origin query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["absolute-form with percent-encoded and sub-delim host"] = ("GET http://ex%41mple.com:/a HTTP/1.1\r\n\r\n",
                ["GET (Get) http://ex%41mple.com:/a Absolute query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["absolute-form with an IPvFuture literal"] = ("GET http://[v1.fe80::a+en1]/ HTTP/1.1\r\n\r\n",
                ["GET (Get) http://[v1.fe80::a+en1]/ Absolute query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["authority-form with an IPv4-mapped IPv6 literal"] = ("CONNECT [::ffff:192.0.2.1]:443 HTTP/1.1\r\n\r\n",
                ["CONNECT (Connect) [::ffff:192.0.2.1]:443 Authority query=-1 Http11", "end of headers", "body None 0", "body []"]),
            ["chunked body followed by a pipelined request"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
                ["POST (Post) / Origin query=-1 Http11", "[Transfer-Encoding]=[chunked]", "end of headers", "body Chunked -1",
                 "trailer end of headers", "body [ok]", "left 18"]),
        };

    /// <summary>Invalid requests: name, request text (Latin-1), the reason the server refuses it for (its status is in <see cref="RequestRejections"/>).</summary>
    public static IReadOnlyDictionary<string, (string Request, RequestRejectionReason Reason)> Invalid { get; } =
        new Dictionary<string, (string, RequestRejectionReason)>
        {
            // Request line (RFC 9112 section 3).
            ["bare LF after the request line"] = ("GET / HTTP/1.1\n\r\n", RequestRejectionReason.RequestLineBareLineFeed),
            ["bare CR in the request line"] = ("GET /a\rb HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTargetCharacter),
            ["two spaces after the method"] = ("GET  / HTTP/1.1\r\n\r\n", RequestRejectionReason.ExtraSpaceBeforeTarget),
            ["two spaces before the version"] = ("GET /  HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidVersion),
            ["space after the version"] = ("GET / HTTP/1.1 \r\n\r\n", RequestRejectionReason.InvalidVersion),
            ["HTAB as separator"] = ("GET\t/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidMethod),
            ["no version"] = ("GET /\r\n\r\n", RequestRejectionReason.MissingVersion),
            ["no target"] = ("GET HTTP/1.1\r\n\r\n", RequestRejectionReason.MissingVersion),
            ["leading space"] = (" GET / HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidMethod),
            ["leading bare LF"] = ("\nGET / HTTP/1.1\r\n\r\n", RequestRejectionReason.RequestLineBareLineFeed),
            ["leading empty line ending in a bare LF"] = ("\r\n\nGET / HTTP/1.1\r\n\r\n", RequestRejectionReason.RequestLineBareLineFeed),
            ["leading bare CR"] = ("\rGET / HTTP/1.1\r\n\r\n", RequestRejectionReason.BareCarriageReturnBeforeRequestLine),
            ["empty lines up to the request-line limit"] = (string.Concat(Enumerable.Repeat("\r\n", 128)) + "GET / HTTP/1.1\r\n\r\n", RequestRejectionReason.TooManyEmptyLines),
            ["empty lines and a request line over the limit"] = (string.Concat(Enumerable.Repeat("\r\n", 100)) + "GET /" + new string('a', 41) + " HTTP/1.1\r\n\r\n", RequestRejectionReason.RequestLineTooLong),
            ["TLS ClientHello"] = ("\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\n", RequestRejectionReason.InvalidMethod),
            ["method longer than any implemented"] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDEF / HTTP/1.1\r\n\r\n", RequestRejectionReason.MethodTooLong),
            ["long token without a space"] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDEF(/ HTTP/1.1\r\n\r\n", RequestRejectionReason.MethodTooLong),
            ["method with a non-token byte"] = ("G(T / HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidMethod),
            ["control byte in the target"] = ("GET /a\u0001b HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTargetCharacter),
            ["DEL in the target"] = ("GET /a\u007fb HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTargetCharacter),
            ["NUL in the target"] = ("GET /a\u0000b HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTargetCharacter),
            ["non-ASCII byte in the target"] = ("GET /caf\u00e9 HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTargetCharacter),
            ["fragment in the target"] = ("GET /page#top HTTP/1.1\r\n\r\n", RequestRejectionReason.TargetWithFragment),
            ["target without a leading slash"] = ("GET index.html HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["asterisk-form with GET"] = ("GET * HTTP/1.1\r\n\r\n", RequestRejectionReason.AsteriskFormWithoutOptions),
            ["asterisk followed by more"] = ("OPTIONS *x HTTP/1.1\r\n\r\n", RequestRejectionReason.AsteriskFormWithoutOptions),
            ["authority-form with GET"] = ("GET example.com:443 HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["CONNECT with origin-form"] = ("CONNECT / HTTP/1.1\r\n\r\n", RequestRejectionReason.ConnectWithoutAuthorityForm),
            ["CONNECT without a port"] = ("CONNECT example.com HTTP/1.1\r\n\r\n", RequestRejectionReason.ConnectWithoutAuthorityForm),
            ["CONNECT with a non-numeric port"] = ("CONNECT example.com:https HTTP/1.1\r\n\r\n", RequestRejectionReason.ConnectWithoutAuthorityForm),
            ["absolute-form with another scheme"] = ("GET ftp://example.com/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with userinfo"] = ("GET http://user@example.com/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with an empty host"] = ("GET http:///path HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with an empty host and a port"] = ("GET http://:80/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with a quote in the host"] = ("GET http://exa\"mple.com/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with a bad percent-encoding in the host"] = ("GET http://ex%4xmple.com/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with two compressions in an IPv6 literal"] = ("GET http://[1::2::3]/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["absolute-form with an unbracketed IPv6 address"] = ("GET http://::1/ HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTarget),
            ["CONNECT with a six-digit port"] = ("CONNECT example.com:100000 HTTP/1.1\r\n\r\n", RequestRejectionReason.ConnectWithoutAuthorityForm),
            ["CONNECT with an IPv4 tail that is not one"] = ("CONNECT [::1.2.3.256]:443 HTTP/1.1\r\n\r\n", RequestRejectionReason.ConnectWithoutAuthorityForm),
            ["lower-case version"] = ("GET / http/1.1\r\n\r\n", RequestRejectionReason.InvalidVersion),
            ["version with two minor digits"] = ("GET / HTTP/1.10\r\n\r\n", RequestRejectionReason.InvalidVersion),
            ["version without minor"] = ("GET / HTTP/1\r\n\r\n", RequestRejectionReason.InvalidVersion),
            ["HTTP/0.9 style line"] = ("GET /\r\n", RequestRejectionReason.MissingVersion),
            ["HTTP/2.0 version"] = ("GET / HTTP/2.0\r\n\r\n", RequestRejectionReason.UnsupportedVersion),
            ["HTTP/3.0 version"] = ("GET / HTTP/3.0\r\n\r\n", RequestRejectionReason.UnsupportedVersion),
            ["HTTP/0.9 version"] = ("GET / HTTP/0.9\r\n\r\n", RequestRejectionReason.UnsupportedVersion),
            ["request line over the limit"] = ("GET /" + new string('a', 260) + " HTTP/1.1\r\n\r\n", RequestRejectionReason.RequestLineTooLong),
            ["long method ending in a bare LF"] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDEFG\n", RequestRejectionReason.MethodTooLong),
            ["bare LF after a long method and a target"] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDEFG / HTTP/1.1\n\r\n", RequestRejectionReason.MethodTooLong),
            ["control byte within the limit of a request line over it"] = ("GET /a\u0001" + new string('a', 300) + " HTTP/1.1\r\n\r\n", RequestRejectionReason.InvalidTargetCharacter),
            ["request line over the limit without its end"] = ("GET /" + new string('a', 300), RequestRejectionReason.RequestLineTooLong),

            // Header section (RFC 9112 section 5, RFC 9110 section 5).
            ["bare LF after a header"] = ("GET / HTTP/1.1\r\nHost: x\n\r\n", RequestRejectionReason.HeaderBareLineFeed),
            ["bare LF ending the header section"] = ("GET / HTTP/1.1\r\nHost: x\r\n\n", RequestRejectionReason.HeaderBareLineFeed),
            ["bare CR ending the header section"] = ("GET / HTTP/1.1\r\nHost: x\r\n\rX", RequestRejectionReason.HeaderBareCarriageReturn),
            ["bare CR in a value"] = ("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", RequestRejectionReason.HeaderBareCarriageReturn),
            ["space before the colon"] = ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", RequestRejectionReason.WhitespaceBeforeColon),
            ["HTAB before the colon"] = ("GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", RequestRejectionReason.WhitespaceBeforeColon),
            ["obs-fold"] = ("GET / HTTP/1.1\r\nX-A: a\r\n  continued\r\n\r\n", RequestRejectionReason.ObsFold),
            ["obs-fold with HTAB"] = ("GET / HTTP/1.1\r\nX-A: a\r\n\tcontinued\r\n\r\n", RequestRejectionReason.ObsFold),
            ["whitespace before the first header"] = ("GET / HTTP/1.1\r\n Host: x\r\n\r\n", RequestRejectionReason.ObsFold),
            ["NUL in a value"] = ("GET / HTTP/1.1\r\nX-A: a\u0000b\r\n\r\n", RequestRejectionReason.InvalidHeaderValueCharacter),
            ["DEL in a value"] = ("GET / HTTP/1.1\r\nX-A: a\u007fb\r\n\r\n", RequestRejectionReason.InvalidHeaderValueCharacter),
            ["escape byte in a value"] = ("GET / HTTP/1.1\r\nX-A: a\u001bb\r\n\r\n", RequestRejectionReason.InvalidHeaderValueCharacter),
            ["NUL in a name"] = ("GET / HTTP/1.1\r\nX\u0000A: b\r\n\r\n", RequestRejectionReason.InvalidHeaderNameCharacter),
            ["non-ASCII byte in a name"] = ("GET / HTTP/1.1\r\nH\u00f3st: x\r\n\r\n", RequestRejectionReason.InvalidHeaderNameCharacter),
            ["separator in a name"] = ("GET / HTTP/1.1\r\nX(A): b\r\n\r\n", RequestRejectionReason.InvalidHeaderNameCharacter),
            ["empty name"] = ("GET / HTTP/1.1\r\n: value\r\n\r\n", RequestRejectionReason.EmptyHeaderName),
            ["line without a colon"] = ("GET / HTTP/1.1\r\nHost x\r\n\r\n", RequestRejectionReason.WhitespaceBeforeColon),
            ["too many headers"] = ("GET / HTTP/1.1\r\n" + string.Concat(Enumerable.Range(0, 21).Select(i => $"X-{i}: v\r\n")) + "\r\n", RequestRejectionReason.TooManyHeaders),
            ["header section over the limit"] = ("GET / HTTP/1.1\r\nX-Big: " + new string('v', 1100) + "\r\n\r\n", RequestRejectionReason.HeadersTooLarge),
            ["header line over the limit with a control byte past it"] = ("GET / HTTP/1.1\r\nX-Big: " + new string('v', 1100) + "\u0001\r\n\r\n", RequestRejectionReason.HeadersTooLarge),
            ["control byte in a header line without its end"] = ("GET / HTTP/1.1\r\nX-A: " + new string('v', 20) + "\u0001" + new string('v', 20), RequestRejectionReason.InvalidHeaderValueCharacter),
            ["non-token byte in a header name without its end"] = ("GET / HTTP/1.1\r\nX-" + new string('n', 20) + "(" + new string('n', 20), RequestRejectionReason.InvalidHeaderNameCharacter),
            ["header section over the limit without its end"] = ("GET / HTTP/1.1\r\nX-Big: " + new string('v', 1100), RequestRejectionReason.HeadersTooLarge),

            // Framing (RFC 9112 section 6) and request smuggling.
            ["Content-Length and Transfer-Encoding"] = ("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.TransferEncodingWithContentLength),
            ["Transfer-Encoding and Content-Length"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", RequestRejectionReason.TransferEncodingWithContentLength),
            ["differing duplicate Content-Length"] = ("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", RequestRejectionReason.InvalidHeaderValue),
            ["Content-Length list"] = ("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello", RequestRejectionReason.InvalidHeaderValue),
            ["negative Content-Length"] = ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", RequestRejectionReason.InvalidHeaderValue),
            ["signed Content-Length"] = ("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello", RequestRejectionReason.InvalidHeaderValue),
            ["hexadecimal Content-Length"] = ("POST / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\nhello", RequestRejectionReason.InvalidHeaderValue),
            ["empty Content-Length"] = ("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", RequestRejectionReason.InvalidHeaderValue),
            ["Content-Length overflowing a long"] = ("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", RequestRejectionReason.InvalidHeaderValue),
            ["Content-Length over the body limit"] = ("POST / HTTP/1.1\r\nContent-Length: 4097\r\n\r\n", RequestRejectionReason.BodyTooLarge),
            ["chunked not last"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", RequestRejectionReason.ChunkedNotFinal),
            ["chunked twice"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.ChunkedTwiceOrWithParameters),
            ["chunked with a parameter"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n", RequestRejectionReason.ChunkedTwiceOrWithParameters),
            ["transfer coding without chunked"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", RequestRejectionReason.ChunkedNotFinal),
            ["empty Transfer-Encoding"] = ("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", RequestRejectionReason.ChunkedNotFinal),
            ["invalid transfer coding token"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: ch@nked, chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.InvalidTransferCoding),
            ["Transfer-Encoding on HTTP/1.0"] = ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.TransferEncodingOnHttp10),
            ["unknown transfer coding before chunked"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.UnsupportedTransferCoding),
            ["unknown transfer coding on another line"] = ("POST / HTTP/1.1\r\nTransfer-Encoding: br\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.UnsupportedTransferCoding),

            // Chunked coding (RFC 9112 section 7.1).
            ["chunk size overflow"] = (Chunked("FFFFFFFFFFFFFFFFF\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.ChunkSizeOverflow),
            ["chunk size past long"] = (Chunked("8000000000000000\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.ChunkSizeOverflow),
            ["chunk size with too many leading zeros"] = (Chunked("00000000000000001\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.ChunkSizeOverflow),
            ["empty chunk size"] = (Chunked("\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkSize),
            ["chunk size with plus sign"] = (Chunked("+1\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkSize),
            ["chunk size with minus sign"] = (Chunked("-1\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkSize),
            ["chunk size with leading space"] = (Chunked(" 1\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkSize),
            ["chunk size with 0x prefix"] = (Chunked("0x1\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkSize),
            ["chunk size with trailing space and no extension"] = (Chunked("1 \r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkExtension),
            ["chunk size line ending with a bare LF"] = (Chunked("1\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkSize),
            ["chunk size line with a bare CR"] = (Chunked("1\rx\r\n0\r\n\r\n"), RequestRejectionReason.ChunkSizeLineBareCarriageReturn),
            ["chunk data without CRLF"] = (Chunked("5\r\nhelloX0\r\n\r\n"), RequestRejectionReason.ChunkDataWithoutCrlf),
            ["chunk data with only LF"] = (Chunked("5\r\nhello\n0\r\n\r\n"), RequestRejectionReason.ChunkDataWithoutCrlf),
            ["chunk data longer than its size"] = (Chunked("3\r\nhello\r\n0\r\n\r\n"), RequestRejectionReason.ChunkDataWithoutCrlf),
            ["chunk extension with a control byte"] = (Chunked("1;a\u0001b\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkExtension),
            ["chunk extension with a bare LF"] = (Chunked("1;a\nx\r\n0\r\n\r\n"), RequestRejectionReason.InvalidChunkExtension),
            ["chunk extension over the limit"] = (Chunked("1;" + new string('e', 40) + "\r\nx\r\n0\r\n\r\n"), RequestRejectionReason.ChunkExtensionTooLong),
            ["last chunk followed by a bare CR"] = (Chunked("0\r\n\rX"), RequestRejectionReason.HeaderBareCarriageReturn),
            ["trailer with space before the colon"] = (Chunked("0\r\nChecksum : abc\r\n\r\n"), RequestRejectionReason.WhitespaceBeforeColon),
            ["trailer with obs-fold"] = (Chunked("0\r\nA: b\r\n c\r\n\r\n"), RequestRejectionReason.ObsFold),
            ["chunked body over the limit"] = (Chunked("800\r\n" + new string('x', 2048) + "\r\n801\r\n" + new string('y', 2049) + "\r\n0\r\n\r\n"), RequestRejectionReason.BodyTooLarge),
        };

    public static byte[] Bytes(string text) => Encoding.Latin1.GetBytes(text);

    private static string Chunked(string body) => "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + body;

    public static IEnumerable<byte[]> AllRequests() =>
        Valid.Values.Select(v => Bytes(v.Request)).Concat(Invalid.Values.Select(v => Bytes(v.Request)));
}
