using System;
using System.Buffers;
using BenchmarkDotNet.Attributes;
using Falconet.Http;
using Falconet.Http.Http1;
using KestrelHttp = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// A whole request (request line and header section) parsed by Falconet's parser and by Kestrel's public
/// <c>HttpParser&lt;TRequestHandler&gt;</c>, each driving a struct handler that stores what Falconet's connection stores:
/// method, version, the target bytes and every header into the generated request collection, through the path the
/// server uses (the set's matcher, then <c>TryAppendMatched</c>). Both fill the same collection the same way, so the
/// difference is the parsers; Kestrel's own header collection is internal to Kestrel and cannot be reached. The
/// counting handlers show the parsers alone, <see cref="StoringAlone"/> the storing alone, and the methods without a
/// [Benchmark] attribute split Falconet's parse for <c>--decompose</c>. Inputs: the TechEmpower plaintext request, a
/// browser request with 11 headers, the same with a 4 KiB cookie, each whole and split across two segments in the middle.
/// </summary>
[MemoryDiagnoser]
public class KestrelParserComparison
{
    private readonly KestrelHttp.HttpParser<KestrelHandler> _kestrel = new(showErrorDetails: false);
    private readonly KestrelHttp.HttpParser<KestrelCounter> _kestrelCounting = new(showErrorDetails: false);
    private readonly RequestSink _sink = new();
    private readonly Counts _counts = new();
    private ReadOnlySequence<byte> _input;
    private byte[] _request = [];
    private ReadOnlySequence<byte> _headerSection;
    private (int Start, int Length) _target;
    private (int Start, int Length)[] _fields = [];

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
        _request = request;
        FindFields(request);
        _headerSection = _input.Slice(Array.IndexOf(request, (byte)'\n') + 1);

        // Both parsers must see the same request: checked once here, not measured.
        int falconet = Falconet();
        string fromFalconet = _sink.Describe();
        int kestrel = Kestrel();
        if (falconet != kestrel || fromFalconet != _sink.Describe())
        {
            throw new InvalidOperationException($"The parsers disagree: {fromFalconet} against {_sink.Describe()}.");
        }
    }

    /// <summary>Falconet's request line alone, counting (for the decomposition of a whole parse).</summary>
    public int FalconetRequestLineAlone()
    {
        var reader = new SequenceReader<byte>(_input);
        var handler = new FalconetCounter(_counts);
        if (!Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default))
        {
            throw new InvalidOperationException("Falconet found the request line incomplete.");
        }

        return _counts.Bytes;
    }

    /// <summary>Falconet's header section alone, counting, line by line as before the line-event walk (the baseline of the walk).</summary>
    public int FalconetHeadersLineByLine()
    {
        var reader = new SequenceReader<byte>(_headerSection);
        var handler = new FalconetCounter(_counts);
        var state = default(HeaderParseState);
        if (!Http1Parser.TryParseHeadersLineByLine(ref handler, ref reader, HttpLimits.Default, ref state))
        {
            throw new InvalidOperationException("Falconet found the header section incomplete.");
        }

        return _counts.Headers;
    }

    /// <summary>Falconet's header section alone, counting, with the line-event walk the parser uses.</summary>
    public int FalconetHeadersWalk()
    {
        var reader = new SequenceReader<byte>(_headerSection);
        var handler = new FalconetCounter(_counts);
        var state = default(HeaderParseState);
        if (!Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state))
        {
            throw new InvalidOperationException("Falconet found the header section incomplete.");
        }

        return _counts.Headers;
    }

    /// <summary>The storing alone, without a parser: what both handlers add to their parser, from spans found in setup.</summary>
    [Benchmark]
    public int StoringAlone()
    {
        byte[] request = _request;
        (int Start, int Length)[] fields = _fields;
        _sink.StartRequest(1, 11, request.AsSpan(_target.Start, _target.Length));
        for (int i = 0; i < fields.Length; i += 2)
        {
            _sink.AddHeader(request.AsSpan(fields[i].Start, fields[i].Length), request.AsSpan(fields[i + 1].Start, fields[i + 1].Length));
        }

        return _sink.Headers.Count;
    }

    /// <summary>Runs one benchmark method (by name) on one input for a while, so a profiler sees nothing else.</summary>
    public static void Loop(string variant, string request, int segments, double seconds)
    {
        var comparison = new KestrelParserComparison { Request = request, Segments = segments };
        comparison.Setup();
        Func<int> operation = (Func<int>)Delegate.CreateDelegate(typeof(Func<int>), comparison, variant);
        long count = 0;
        long sum = 0;
        double fastest = double.MaxValue;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            long start = System.Diagnostics.Stopwatch.GetTimestamp();
            for (int i = 0; i < 20_000; i++)
            {
                sum += operation();
            }

            fastest = Math.Min(fastest, System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalNanoseconds / 20_000);
            count += 20_000;
        }

        Console.WriteLine(string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $"{variant} {request} {segments}: {clock.Elapsed.TotalNanoseconds / count:F1} ns per call on average, {fastest:F1} ns in the fastest batch (checksum {sum})"));
    }

    // The target and each header's name and value (trimmed) as offsets into the request, for StoringAlone.
    private void FindFields(byte[] request)
    {
        string text = System.Text.Encoding.Latin1.GetString(request);
        int lineEnd = text.IndexOf("\r\n", StringComparison.Ordinal);
        int targetStart = text.IndexOf(' ', StringComparison.Ordinal) + 1;
        _target = (targetStart, text.IndexOf(' ', targetStart) - targetStart);
        var fields = new System.Collections.Generic.List<(int, int)>();
        for (int start = lineEnd + 2; text[start] != '\r'; start = text.IndexOf("\r\n", start, StringComparison.Ordinal) + 2)
        {
            int colon = text.IndexOf(':', start);
            int valueStart = colon + 1 + (text[colon + 1] == ' ' ? 1 : 0);
            fields.Add((start, colon - start));
            fields.Add((valueStart, text.IndexOf("\r\n", start, StringComparison.Ordinal) - valueStart));
        }

        _fields = [.. fields];
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

    /// <summary>Kestrel's parser with a handler that only counts: the parser alone.</summary>
    [Benchmark]
    public int KestrelParserAlone()
    {
        var reader = new SequenceReader<byte>(_input);
        var handler = new KestrelCounter(_counts);
        if (!_kestrelCounting.ParseRequestLine(handler, ref reader) || !_kestrelCounting.ParseHeaders(handler, ref reader))
        {
            throw new InvalidOperationException("Kestrel found the request incomplete.");
        }

        return _counts.Headers;
    }

    /// <summary>Falconet's parser with a handler that only counts: the parser alone.</summary>
    [Benchmark]
    public int FalconetParserAlone()
    {
        var reader = new SequenceReader<byte>(_input);
        var handler = new FalconetCounter(_counts);
        var state = default(HeaderParseState);
        if (!Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default)
            || !Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state))
        {
            throw new InvalidOperationException("Falconet found the request incomplete.");
        }

        return _counts.Headers;
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

        /// <summary>What Falconet's connection does with a header: the set's generated matcher, then the collection's append.</summary>
        public bool AddHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
            => Headers.TryAppendMatched(BuiltInHeaderSet.IndexOfRequestHeader(name), name, value);

        public string Describe()
            => $"{System.Text.Encoding.ASCII.GetString(Target, 0, TargetLength)} {Headers.Count} headers, host {Headers.Host}";
    }

    private readonly struct FalconetHandler(RequestSink sink) : IHttpRequestLineHandler, IHttpHeadersHandler
    {
        public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
            RequestTargetForm form, int queryIndex, KnownVersion version)
            => sink.StartRequest(method == KnownMethod.Get ? 1 : 0, version == KnownVersion.Http11 ? 11 : 10, target);

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => sink.AddHeader(name, value);

        public void OnHeadersComplete()
        {
        }
    }

    private sealed class Counts
    {
        public int Headers;
        public int Bytes;
    }

    private readonly struct FalconetCounter(Counts counts) : IHttpRequestLineHandler, IHttpHeadersHandler
    {
        public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
            RequestTargetForm form, int queryIndex, KnownVersion version)
        {
            counts.Headers = 0;
            counts.Bytes = target.Length;
        }

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            counts.Headers++;
            counts.Bytes += name.Length + value.Length;
            return true;
        }

        public void OnHeadersComplete()
        {
        }
    }

    private readonly struct KestrelCounter(Counts counts) : KestrelHttp.IHttpRequestLineHandler, KestrelHttp.IHttpHeadersHandler
    {
        public void OnStartLine(KestrelHttp.HttpVersionAndMethod versionAndMethod, KestrelHttp.TargetOffsetPathLength targetPath, Span<byte> startLine)
        {
            counts.Headers = 0;
            counts.Bytes = startLine.Length - targetPath.Offset;
        }

        public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            counts.Headers++;
            counts.Bytes += name.Length + value.Length;
        }

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

    private readonly struct KestrelHandler(RequestSink sink) : KestrelHttp.IHttpRequestLineHandler, KestrelHttp.IHttpHeadersHandler
    {
        public void OnStartLine(KestrelHttp.HttpVersionAndMethod versionAndMethod, KestrelHttp.TargetOffsetPathLength targetPath, Span<byte> startLine)
            => sink.StartRequest(
                versionAndMethod.Method == KestrelHttp.HttpMethod.Get ? 1 : 0,
                versionAndMethod.Version == KestrelHttp.HttpVersion.Http11 ? 11 : 10,
                startLine.Slice(targetPath.Offset)); // Kestrel hands the line up to the end of the target

        public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => sink.AddHeader(name, value);

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
