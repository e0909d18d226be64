/* a 128 MiB array read and summed (AVX-512, 4 accumulators) five times: the core's streaming read bandwidth now */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(){ size_t n=1<<24; double *a=aligned_alloc(64,n*8); for(size_t i=0;i<n;i++)a[i]=i;
 for(int r=0;r<5;r++){ double t=now(); __m512d s0=_mm512_setzero_pd(),s1=s0,s2=s0,s3=s0;
  for(size_t i=0;i<n;i+=32){s0=_mm512_add_pd(s0,_mm512_load_pd(a+i));s1=_mm512_add_pd(s1,_mm512_load_pd(a+i+8));s2=_mm512_add_pd(s2,_mm512_load_pd(a+i+16));s3=_mm512_add_pd(s3,_mm512_load_pd(a+i+24));}
  double dt=now()-t; double s=_mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s0,s1),_mm512_add_pd(s2,s3)));
  printf("read %.1f ms %.1f GB/s (%g)\n",dt*1e3,n*8/dt/1e9,s);}
}
