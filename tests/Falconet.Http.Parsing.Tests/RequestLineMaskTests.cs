using System;
using System.Buffers;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>
/// The request line's mask path gives the answer of the scan-per-delimiter parse for every input: the same handler call,
/// result or rejection reason and bytes consumed, on random lines with targets on both sides of the 64-byte masks,
/// whole and split across segments.
/// </summary>
public sealed class RequestLineMaskTests
{
    private static readonly string[] s_methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT", "get", "PURGE", "G(T", ""];
    private static readonly string[] s_versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/1.10", "HTTP/1.1 ", "", "HTTP/1."];
    private const string TargetBytes = "abcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:@[]?#";

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Random_request_lines_get_the_answer_of_the_scans(int seed)
    {
        var random = new Random(seed);
        for (int round = 0; round < 5_000; round++)
        {
            byte[] line = Line(random);
            var limits = new HttpLimits { MaxRequestLineSize = random.Next(4) == 0 ? random.Next(8, line.Length + 4) : 8192 };
            int emptyLinesBefore = random.Next(8) == 0 ? 2 * random.Next(3) : 0;
            byte[][] pieces = random.Next(3) == 0 ? Cut(line, random) : [line];

            string masks = Parse(pieces, limits, emptyLinesBefore, byScans: false);
            string scans = Parse(pieces, limits, emptyLinesBefore, byScans: true);

            masks.ShouldBe(scans, $"seed {seed} round {round}, line [{Printable(line)}] in {pieces.Length} piece(s), limit {limits.MaxRequestLineSize}, {emptyLinesBefore} empty bytes before:\nmasks: {masks}\nscans: {scans}");
        }
    }

    [Fact]
    public void Targets_of_every_length_around_the_mask_boundaries_get_the_answer_of_the_scans()
    {
        foreach (string method in new[] { "GET", "OPTIONS" })
        {
            for (int length = 1; length < 200; length++)
            {
                foreach (char last in "a?#")
                {
                    string target = "/" + new string('p', length - 1) + last;
                    foreach (string tail in new[] { " HTTP/1.1\r\n", " HTTP/1.1\r\nHost: x\r\n\r\n", " HTTP/1.1\n", " HTTP/1.1\r" })
                    {
                        byte[] line = Encoding.ASCII.GetBytes(method + " " + target + tail);

                        Parse([line], HttpLimits.Default, 0, byScans: false).ShouldBe(Parse([line], HttpLimits.Default, 0, byScans: true));
                    }
                }
            }
        }
    }

    private static string Parse(byte[][] pieces, HttpLimits limits, int emptyLinesBefore, bool byScans)
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(Segments.Chain(pieces));
        string outcome;
        try
        {
            bool parsed = byScans
                ? Http1Parser.TryParseRequestLineByScans(ref handler, ref reader, limits, emptyLinesBefore)
                : Http1Parser.TryParseRequestLine(ref handler, ref reader, limits, emptyLinesBefore);
            outcome = parsed ? "parsed" : "incomplete";
        }
        catch (BadHttpRequestException e)
        {
            outcome = "rejected " + e.Reason;
        }

        return $"{string.Join(" | ", record.Log)} {outcome}, consumed {reader.Consumed}";
    }

    private static byte[] Line(Random random)
    {
        var text = new StringBuilder();
        if (random.Next(10) == 0)
        {
            text.Append("\r\n");
        }

        text.Append(s_methods[random.Next(s_methods.Length)]);
        text.Append(random.Next(30) == 0 ? "  " : " ");
        text.Append(Target(random));
        text.Append(random.Next(30) == 0 ? "  " : " ");
        text.Append(s_versions[random.Next(s_versions.Length)]);
        text.Append(random.Next(12) switch
        {
            0 => "\n",
            1 => "\r",
            2 => "",
            3 => "\rx\n",
            _ => "\r\n",
        });
        if (random.Next(2) == 0)
        {
            text.Append("Host: example.com\r\nAccept: */*\r\n\r\n");
        }

        return Encoding.Latin1.GetBytes(text.ToString());
    }

    private static string Target(Random random)
    {
        switch (random.Next(12))
        {
            case 0:
                return "*";
            case 1:
                return "http://example.com:8080/a?b";
            case 2:
                return "example.com:443";
            case 3:
                return "";
        }

        int length = random.Next(5) == 0 ? random.Next(60, 200) : random.Next(1, 40);
        var target = new StringBuilder("/");
        for (int i = 1; i < length; i++)
        {
            target.Append(random.Next(150) == 0 ? "\t\u0001\u007F\u00E9\r"[random.Next(5)] : TargetBytes[random.Next(TargetBytes.Length)]);
        }

        return target.ToString();
    }

    private static byte[][] Cut(byte[] line, Random random)
    {
        int[] cuts = [.. Enumerable.Range(0, random.Next(1, 3)).Select(_ => random.Next(1, line.Length)).Distinct().Order()];
        return Segments.SplitAt(line, cuts).Where(p => p.Length > 0).ToArray();
    }

    private static string Printable(byte[] bytes)
        => string.Concat(bytes.Select(b => b is >= 0x20 and < 0x7F ? ((char)b).ToString() : $"\\x{b:X2}"));
}
