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
/// The header section's line-event walk gives the answer of the line-by-line parse for every input: the same handler
/// calls, result or rejection reason, bytes consumed and state, on random sections built to put line ends, names and
/// limits on every side of the 64-byte chunk boundaries, whole and split across segments.
/// </summary>
public sealed class HeaderWalkTests
{
    private const string NameBytes = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-_!#$%&'*+.^`|~";
    private const string ValueBytes = " \t abcdefghijklmnopqrstuvwxyz0123456789;=,/\"()?:@[]{}\u00E9\u00FF";
    private const string OddBytes = "\0\u0001\t\n\r\u001F \u007F\u0080(:@\u00C0";

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void Random_sections_get_the_answer_of_the_line_by_line_parse(int seed)
    {
        var random = new Random(seed);
        for (int round = 0; round < 5_000; round++)
        {
            byte[] section = Section(random);
            var limits = new HttpLimits
            {
                MaxRequestHeadersSize = random.Next(4) == 0 ? random.Next(1, section.Length + 2) : HttpLimits.Default.MaxRequestHeadersSize,
                MaxRequestHeaderCount = random.Next(4) == 0 ? random.Next(1, 6) : 100,
            };
            var start = random.Next(4) == 0 ? new HeaderParseState { Count = random.Next(3), Bytes = random.Next(Math.Min(40, limits.MaxRequestHeadersSize)) } : default;
            byte[][] pieces = random.Next(3) == 0 ? Cut(section, random) : [section];

            string walk = Parse(pieces, limits, start, lineByLine: false);
            string reference = Parse(pieces, limits, start, lineByLine: true);

            walk.ShouldBe(reference, $"seed {seed} round {round}, section [{Printable(section)}] in {pieces.Length} piece(s), size limit {limits.MaxRequestHeadersSize}, count limit {limits.MaxRequestHeaderCount}, state {start.Count}/{start.Bytes}:\nwalk:\n{walk}\nline by line:\n{reference}");
        }
    }

    [Fact]
    public void Every_line_end_position_around_the_chunk_boundaries_gets_the_answer_of_the_line_by_line_parse()
    {
        foreach (string ending in new[] { "\r\n", "\n", "\r", "\rx" })
        {
            for (int first = 1; first < 140; first++)
            {
                for (int second = 0; second < 70; second += 3)
                {
                    string section = "N: " + new string('a', first) + ending + "M:" + new string('b', second) + "\r\n\r\n";
                    byte[] bytes = Encoding.ASCII.GetBytes(section);
                    var limits = HttpLimits.Default;

                    Parse([bytes], limits, default, lineByLine: false).ShouldBe(Parse([bytes], limits, default, lineByLine: true));
                }
            }
        }
    }

    private static string Parse(byte[][] pieces, HttpLimits limits, HeaderParseState start, bool lineByLine)
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var state = start;
        var reader = new SequenceReader<byte>(Segments.Chain(pieces));
        string outcome;
        try
        {
            bool complete = lineByLine
                ? Http1Parser.TryParseHeadersLineByLine(ref handler, ref reader, limits, ref state)
                : Http1Parser.TryParseHeaders(ref handler, ref reader, limits, ref state);
            outcome = complete ? "complete" : "incomplete";
        }
        catch (BadHttpRequestException e)
        {
            outcome = "rejected " + e.Reason;
        }

        return $"{string.Join("\n", record.Log)}\n{outcome}, consumed {reader.Consumed}, state {state.Count}/{state.Bytes}";
    }

    private static byte[] Section(Random random)
    {
        var bytes = new List<byte>();
        int lines = random.Next(0, 9);
        for (int line = 0; line < lines; line++)
        {
            if (random.Next(30) == 0)
            {
                bytes.Add(random.Next(2) == 0 ? (byte)' ' : (byte)'\t');
            }

            bytes.AddRange(random.Next(12) == 0 ? "Content-Length"u8.ToArray() : Name(random));
            if (random.Next(25) != 0)
            {
                bytes.Add((byte)':');
            }

            bytes.AddRange(Value(random));
            bytes.AddRange(LineEnd(random));
        }

        if (random.Next(6) != 0)
        {
            bytes.AddRange(LineEnd(random));
        }

        if (random.Next(3) == 0)
        {
            // What follows the section (a body, the next request) must never be read as part of it.
            bytes.AddRange(Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\n\r\n\0\r\n"));
        }

        return [.. bytes];
    }

    private static byte[] Name(Random random)
    {
        int length = random.Next(8) == 0 ? random.Next(50, 90) : random.Next(0, 20);
        var name = new byte[length];
        for (int i = 0; i < length; i++)
        {
            name[i] = random.Next(60) == 0 ? Odd(random) : Pick(random, NameBytes);
        }

        return name;
    }

    private static byte[] Value(Random random)
    {
        int length = random.Next(6) == 0 ? random.Next(60, 300) : random.Next(0, 40);
        var value = new byte[length];
        for (int i = 0; i < length; i++)
        {
            value[i] = random.Next(200) == 0 ? Odd(random) : Pick(random, ValueBytes);
        }

        return value;
    }

    private static byte[] LineEnd(Random random) => random.Next(40) switch
    {
        0 => "\n"u8.ToArray(),
        1 => "\r"u8.ToArray(),
        2 => "\r\r\n"u8.ToArray(),
        3 => "\rx"u8.ToArray(),
        _ => "\r\n"u8.ToArray(),
    };

    private static byte Odd(Random random) => Pick(random, OddBytes);

    private static byte Pick(Random random, string alphabet) => (byte)alphabet[random.Next(alphabet.Length)];

    private static byte[][] Cut(byte[] section, Random random)
    {
        int[] cuts = [.. Enumerable.Range(0, random.Next(1, 4)).Select(_ => random.Next(section.Length + 1)).Distinct().Order()];
        return Segments.SplitAt(section, cuts).Where(p => p.Length > 0).DefaultIfEmpty([]).ToArray();
    }

    private static string Printable(byte[] bytes)
        => string.Concat(bytes.Select(b => b is >= 0x20 and < 0x7F ? ((char)b).ToString() : $"\\x{b:X2}"));
}
