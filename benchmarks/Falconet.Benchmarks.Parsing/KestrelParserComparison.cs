using System;
using System.Buffers;
using BenchmarkDotNet.Attributes;
using Falconet.Http;
using KestrelHttp = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// A whole request (request line and header section) parsed by Falconet's parser and by Kestrel's public
/// <c>HttpParser&lt;TRequestHandler&gt;</c>, each driving a struct handler that stores what Falconet's connection stores:
/// method, version, the target bytes and every header into the generated request collection. Both fill the same
/// collection, so the difference is the parsers; Kestrel's own header collection is internal to Kestrel and cannot be
/// reached. Inputs: the TechEmpower plaintext request, a browser request with 11 headers, the same with a 4 KiB cookie,
/// each whole and split across two segments in the middle.
/// </summary>
[MemoryDiagnoser]
public class KestrelParserComparison
{
    private readonly KestrelHttp.HttpParser<KestrelHandler> _kestrel = new(showErrorDetails: false);
    private readonly RequestSink _sink = new();
    private ReadOnlySequence<byte> _input;

    /// <summary>The request parsed.</summary>
    [Params("TechEmpower", "Browser", "Cookie4KiB")]
    public string Request { get; set; } = "TechEmpower";

    /// <summary>The request in one segment, or across two (split in the middle, inside a header line).</summary>
    [Params(1, 2)]
    public int Segments { get; set; } = 1;

    /// <summary>Builds the input sequence.</summary>
    [GlobalSetup]
    public void Setup()
    {
        byte[] request = Request switch
        {
            "TechEmpower" => HeaderBlocks.TechEmpowerRequest,
            "Browser" => HeaderBlocks.BrowserRequest,
            _ => HeaderBlocks.CookieRequest,
        };
        _input = Segments == 1
            ? new ReadOnlySequence<byte>(request)
            : Segmented(request);

        // Both parsers must see the same request: checked once here, not measured.
        int falconet = Falconet();
        string fromFalconet = _sink.Describe();
        int kestrel = Kestrel();
        if (falconet != kestrel || fromFalconet != _sink.Describe())
        {
            throw new InvalidOperationException($"The parsers disagree: {fromFalconet} against {_sink.Describe()}.");
        }
    }

    private static ReadOnlySequence<byte> Segmented(byte[] request)
        => Http.Parsing.Tests.Support.Segments.Chain(Http.Parsing.Tests.Support.Segments.SplitAt(request, request.Length / 2));

    /// <summary>Kestrel's parser (the baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Kestrel()
    {
        var reader = new SequenceReader<byte>(_input);
        var handler = new KestrelHandler(_sink);
        if (!_kestrel.ParseRequestLine(handler, ref reader) || !_kestrel.ParseHeaders(handler, ref reader))
        {
            throw new InvalidOperationException("Kestrel found the request incomplete.");
        }

        return _sink.Headers.Count;
    }

    /// <summary>Falconet's parser.</summary>
    [Benchmark]
    public int Falconet()
    {
        var reader = new SequenceReader<byte>(_input);
        var handler = new FalconetHandler(_sink);
        var state = default(HeaderParseState);
        if (!Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default)
            || !Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state))
        {
            throw new InvalidOperationException("Falconet found the request incomplete.");
        }

        return _sink.Headers.Count;
    }

    /// <summary>What a connection keeps of a request: method, version, target bytes (copied), headers.</summary>
    private sealed class RequestSink
    {
        public readonly RequestHeaders Headers = new();
        public readonly byte[] Target = new byte[8192];
        public int TargetLength;
        public int Method;
        public int Version;

        public void StartRequest(int method, int version, ReadOnlySpan<byte> target)
        {
            Headers.Clear();
            Method = method;
            Version = version;
            target.CopyTo(Target);
            TargetLength = target.Length;
        }

        public string Describe()
            => $"{System.Text.Encoding.ASCII.GetString(Target, 0, TargetLength)} {Headers.Count} headers, host {Headers.Host}";
    }

    private readonly struct FalconetHandler(RequestSink sink) : IHttpRequestLineHandler, IHttpHeadersHandler
    {
        public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
            RequestTargetForm form, int queryIndex, KnownVersion version)
            => sink.StartRequest(method == KnownMethod.Get ? 1 : 0, version == KnownVersion.Http11 ? 11 : 10, target);

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => sink.Headers.TryAppend(name, value);

        public void OnHeadersComplete()
        {
        }
    }

    private readonly struct KestrelHandler(RequestSink sink) : KestrelHttp.IHttpRequestLineHandler, KestrelHttp.IHttpHeadersHandler
    {
        public void OnStartLine(KestrelHttp.HttpVersionAndMethod versionAndMethod, KestrelHttp.TargetOffsetPathLength targetPath, Span<byte> startLine)
            => sink.StartRequest(
                versionAndMethod.Method == KestrelHttp.HttpMethod.Get ? 1 : 0,
                versionAndMethod.Version == KestrelHttp.HttpVersion.Http11 ? 11 : 10,
                startLine.Slice(targetPath.Offset)); // Kestrel hands the line up to the end of the target

        public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => sink.Headers.TryAppend(name, value);

        public void OnHeadersComplete(bool endStream)
        {
        }

        public void OnStaticIndexedHeader(int index)
        {
        }

        public void OnStaticIndexedHeader(int index, ReadOnlySpan<byte> value)
        {
        }
    }
}
