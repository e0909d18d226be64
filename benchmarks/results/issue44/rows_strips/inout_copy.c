#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+1e-9*t.tv_nsec;}
__attribute__((noinline)) void f_restrict(double *restrict v0, double *restrict v1){
  for (int64_t i=0;i<129;++i){
    #pragma omp simd
    for (int64_t j=0;j<129;++j) v1[i*129+j] = v0[0]*v1[i*129+j];
  }
}
__attribute__((noinline)) void f_src(double *restrict v0, double *v1, const double *s1){
  for (int64_t i=0;i<129;++i){
    #pragma omp simd
    for (int64_t j=0;j<129;++j) v1[i*129+j] = v0[0]*s1[i*129+j];
  }
}
__attribute__((noinline)) void f_src_nosimd(double *restrict v0, double *v1, const double *s1){
  for (int64_t i=0;i<129;++i){
    for (int64_t j=0;j<129;++j) v1[i*129+j] = v0[0]*s1[i*129+j];
  }
}
int main(){
  double *x=aligned_alloc(64,129*129*8+64),*y=aligned_alloc(64,129*129*8+64), s=1.0000001;
  for(int i=0;i<129*129;++i){x[i]=1;y[i]=1;}
  double best[6]={1,1,1,1,1,1};
  for(int r=0;r<20;++r){
    double t;
    t=now(); for(int k=0;k<2000;++k) f_restrict(&s,x); t=(now()-t)/2000; if(t<best[0])best[0]=t;
    t=now(); for(int k=0;k<2000;++k) {memcpy(y,x,129*129*8); f_restrict(&s,y);} t=(now()-t)/2000; if(t<best[1])best[1]=t;
    t=now(); for(int k=0;k<2000;++k) f_src(&s,x,x); t=(now()-t)/2000; if(t<best[2])best[2]=t;
    t=now(); for(int k=0;k<2000;++k) f_src(&s,y,x); t=(now()-t)/2000; if(t<best[3])best[3]=t;
    t=now(); for(int k=0;k<2000;++k) f_src_nosimd(&s,x,x); t=(now()-t)/2000; if(t<best[4])best[4]=t;
    t=now(); for(int k=0;k<2000;++k) f_src_nosimd(&s,y,x); t=(now()-t)/2000; if(t<best[5])best[5]=t;
  }
  const char*nm[]={"in place (restrict)","memcpy + in place","src==dst (no restrict, simd)","src!=dst (no restrict, simd)","src==dst no pragma","src!=dst no pragma"};
  for(int v=0;v<6;++v) printf("%-32s %7.2f us\n",nm[v],best[v]*1e6);
}
