using System.Collections.Generic;
using System.Text;
using Falconet.Generator.Planning;

namespace Falconet.Generator.Emitting;

/// <summary>One emitted source file.</summary>
public sealed record EmittedFile(string HintName, string Text);

/// <summary>Turns a <see cref="GenerationPlan"/> into formatted views and renders them through the templates.</summary>
public static class Emitter
{
    public static IReadOnlyList<EmittedFile> Emit(GenerationPlan plan)
    {
        FileView file = CreateFileView(plan);
        return new[]
        {
            Render("KnownMethods.g.cs", TemplateRenderer.KnownMethods, CreateMethodsView(plan, file)),
            Render("KnownVersions.g.cs", TemplateRenderer.KnownVersions, CreateVersionsView(plan, file)),
            Render("RequestHeaders.g.cs", TemplateRenderer.RequestHeaders, CreateHeadersView(plan.Request, file, "Request headers of one HTTP/1.1 request: a field per known header, a bit set of the present ones, unknown headers in a dictionary created on first use.")),
            Render("ResponseHeaders.g.cs", TemplateRenderer.ResponseHeaders, CreateHeadersView(plan.Response, file, "Response headers of one HTTP/1.1 response, written by CopyTo from precomputed name bytes.")),
            Render("HeaderHelpers.g.cs", TemplateRenderer.HeaderHelpers, new { File = file, TokenChars = CSharpText.StringLiteral(Falconet.Text.HttpTokenChars.All) }),
        };
    }

    private static EmittedFile Render(string hintName, HandlebarsDotNet.HandlebarsTemplate<object, object> template, object view)
    {
        string text = template(view).Replace("\r\n", "\n");
        return new EmittedFile(hintName, text.TrimEnd('\n') + "\n");
    }

    private static FileView CreateFileView(GenerationPlan plan) => new()
    {
        GeneratorVersion = plan.GeneratorVersion,
        SchemaHash = plan.SchemaHash,
        Namespace = plan.Options.Namespace,
        Visibility = plan.Options.Visibility,
        Helpers = "global::" + plan.Options.Namespace + ".HeaderHelpers",
    };

    private static MethodsView CreateMethodsView(GenerationPlan plan, FileView file)
    {
        var view = new MethodsView { File = file };
        foreach (MethodPlan method in plan.Methods)
        {
            var item = new MethodView
            {
                Member = method.Member,
                Literal = CSharpText.StringLiteral(method.Name),
                Length = CSharpText.Int(method.Length),
            };
            string text = method.Name + " ";
            var conditions = new List<(string Code, string Comment)>();
            if (method.MinimumSpan > 8)
            {
                conditions.Add(("requestLine.Length >= " + CSharpText.Int(method.MinimumSpan), "// the method and its space span more than 8 bytes"));
            }

            foreach (ByteChunk chunk in method.Chunks)
            {
                string read = chunk.Offset == 0
                    ? "head"
                    : file.Helpers + ".Read" + CSharpText.Int(chunk.Size * 8) + "(ref start, " + CSharpText.Int(chunk.Offset) + ")";
                string code = chunk.Mask == ByteChunks.FullMask(chunk.Size)
                    ? read + " == " + CSharpText.Hex(chunk.Value, chunk.Size)
                    : "(" + read + " & " + CSharpText.Hex(chunk.Mask, chunk.Size) + ") == " + CSharpText.Hex(chunk.Value, chunk.Size);
                conditions.Add((code, CSharpText.ChunkComment(text, chunk, text.Length, caseInsensitive: false)));
            }

            AddConditionLines(item.Lines, conditions);
            view.Methods.Add(item);
        }

        var tokens = new StringBuilder();
        for (char c = '!'; c <= '~'; c++)
        {
            if (Schema.HttpToken.IsTokenChar(c))
            {
                tokens.Append(c);
            }
        }

        view.TokenBytes = CSharpText.StringLiteral(tokens.ToString());
        return view;
    }

    private static VersionsView CreateVersionsView(GenerationPlan plan, FileView file)
    {
        var view = new VersionsView { File = file };
        foreach (VersionPlan version in plan.Versions)
        {
            view.Versions.Add(new VersionView
            {
                Member = version.Member,
                Literal = CSharpText.StringLiteral(version.Text),
                Value = CSharpText.Hex(version.Value, 8),
                Comment = "// " + CSharpText.Quote(version.Text) + " bytes 0..7, exact",
            });
        }

        return view;
    }

    private static HeadersView CreateHeadersView(HeaderSetPlan plan, FileView file, string summary)
    {
        var view = new HeadersView
        {
            File = file,
            TypeName = plan.TypeName,
            Summary = summary,
            BitCount = CSharpText.Int(plan.BitCount),
            HasContentLength = plan.HasContentLength,
        };

        bool firstInBlob = true;
        for (int i = 0; i < plan.Headers.Count; i++)
        {
            HeaderPlan header = plan.Headers[i];
            string prefix = "\r\n" + header.Name + ": ";
            if (header.IsContentLength)
            {
                view.ContentLengthName = CSharpText.StringLiteral(header.Name);
                view.ContentLengthPrefix = CSharpText.StringLiteral(prefix) + "u8";
                continue;
            }

            // Every line but the first starts with "+" and the ";" has a line of its own, so appending a header adds lines.
            view.BlobLines.Add((firstInBlob ? string.Empty : "+ ") + CSharpText.StringLiteral(prefix) + "u8 // " + CSharpText.Int(header.PrefixOffset) + ": " + header.Name);
            view.OffsetLines.Add(CSharpText.Int(header.PrefixOffset) + ", // " + header.Name);
            firstInBlob = false;
            view.Headers.Add(new HeaderView
            {
                Name = header.Name,
                Literal = CSharpText.StringLiteral(header.Name),
                Property = header.Property,
                Field = header.Field,
                Index = CSharpText.Int(header.BitIndex),
                Bit = "(1UL << " + CSharpText.Int(header.BitIndex) + ")",
                KnownValues = KnownValues(header),
            });
        }

        if (firstInBlob)
        {
            view.BlobLines.Add("global::System.ReadOnlySpan<byte>.Empty");
        }

        view.OffsetType = plan.NameBlob.Length <= ushort.MaxValue ? "ushort" : "int";
        foreach (BucketPlan bucket in plan.Buckets)
        {
            var bucketView = new BucketView { Length = CSharpText.Int(bucket.Length) };
            for (int r = 0; r < bucket.Reads.Count; r++)
            {
                ByteChunk read = bucket.Reads[r];
                bucketView.Reads.Add(new ReadView
                {
                    Type = CSharpText.ReadType(read.Size),
                    Variable = "r" + CSharpText.Int(r),
                    Bits = CSharpText.Int(read.Size * 8),
                    Offset = CSharpText.Int(read.Offset),
                });
            }

            foreach (int index in bucket.Order)
            {
                HeaderPlan header = plan.Headers[index];
                var match = new MatchView
                {
                    Index = header.IsContentLength ? "ContentLengthIndex" : CSharpText.Int(header.BitIndex),
                    Literal = CSharpText.StringLiteral(header.Name),
                };
                var conditions = new List<(string Code, string Comment)>();
                for (int c = 0; c < header.Chunks.Count; c++)
                {
                    ByteChunk chunk = header.Chunks[c];
                    conditions.Add((
                        "(r" + CSharpText.Int(c) + " & " + CSharpText.Hex(chunk.Mask, chunk.Size) + ") == " + CSharpText.Hex(chunk.Value, chunk.Size),
                        CSharpText.ChunkComment(header.Name.ToLowerInvariant(), chunk, header.Name.Length, caseInsensitive: true)));
                }

                AddConditionLines(match.Lines, conditions);
                bucketView.Matches.Add(match);
            }

            view.Buckets.Add(bucketView);
        }

        return view;
    }

    private static string KnownValues(HeaderPlan header)
    {
        if (header.Values.Count == 0)
        {
            return "global::System.Array.Empty<string>()";
        }

        var builder = new StringBuilder("new string[] { ");
        for (int i = 0; i < header.Values.Count; i++)
        {
            builder.Append(i == 0 ? string.Empty : ", ").Append(CSharpText.StringLiteral(header.Values[i]));
        }

        return builder.Append(" }").ToString();
    }

    // "a && // comment" on every line but the last, which closes the condition: "z) // comment".
    private static void AddConditionLines(List<string> lines, List<(string Code, string Comment)> conditions)
    {
        for (int i = 0; i < conditions.Count; i++)
        {
            bool last = i == conditions.Count - 1;
            lines.Add(conditions[i].Code + (last ? ") " : " && ") + conditions[i].Comment);
        }
    }
}
